package postgres_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuMeter reads the CPU time the benchmark's process and, when LEASELAB_BENCH_PGPID names the
// server's postmaster (a server on this machine, readable in /proc), the server's processes have
// used, so that a sub-benchmark can report CPU per message next to msgs/s: on a machine whose
// cores the client and the server share, CPU per message decides the rate at many workers.
type cpuMeter struct {
	client, server time.Duration
	hasServer      bool
}

func readCPU() cpuMeter {
	var m cpuMeter
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		m.client = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	pm, err := strconv.Atoi(os.Getenv("LEASELAB_BENCH_PGPID"))
	if err != nil {
		return m
	}
	// The postmaster's own time and its reaped children's, then every live child's.
	ticks, ok := statTicks(pm, true)
	if !ok {
		return m
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == pm {
			continue
		}
		if parentOf(p) == pm {
			t, _ := statTicks(p, false)
			ticks += t
		}
	}
	m.server, m.hasServer = time.Duration(ticks)*time.Second/100, true // USER_HZ is 100 on Linux
	return m
}

// statFields is /proc/PID/stat after the command (which may hold spaces), split.
func statFields(p int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

func parentOf(p int) int {
	f := statFields(p)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// statTicks is utime+stime (fields 14 and 15; with reaped, also cutime and cstime) of p.
func statTicks(p int, reaped bool) (int64, bool) {
	f := statFields(p)
	if len(f) < 15 {
		return 0, false
	}
	// After the command, utime is field 11 and stime 12; cutime 13 and cstime 14.
	last := 12
	if reaped {
		last = 14
	}
	var sum int64
	for i := 11; i <= last; i++ {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		sum += n
	}
	return sum, true
}

// report adds the CPU per message since before to b's metrics; the server's only for a run on
// the server (server), not for one on a SQLite file.
func (before cpuMeter) report(b *testing.B, n int, server bool) {
	after := readCPU()
	b.ReportMetric(float64((after.client-before.client).Microseconds())/float64(n), "client-µs/msg")
	if server && before.hasServer && after.hasServer {
		b.ReportMetric(float64((after.server-before.server).Microseconds())/float64(n), "server-µs/msg")
	}
}
