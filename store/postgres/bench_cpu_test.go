package postgres_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5"
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

// serverMeter reads, on a connection of its own, what the server counts for everyone: the
// statements run (pg_stat_statements' calls, when the extension can be had) and the
// transactions committed in the database (pg_stat_database.xact_commit), so that a
// sub-benchmark can report statements and commits per message. A backend's commits reach
// pg_stat_database when it ends (or is idle for a while): report is called after the workers'
// connections are closed, and waits a moment for their backends to end.
type serverMeter struct {
	url           string
	stmts, xacts  int64
	hasStmts, has bool
}

// readServer reads the server's counts now; with on false (a SQLite run) it reads nothing.
func readServer(b *testing.B, on bool) serverMeter {
	if !on {
		return serverMeter{}
	}
	m := serverMeter{url: storetest.PostgresURL(b)}
	m.stmts, m.xacts, m.hasStmts, m.has = serverCounts(m.url, true)
	return m
}

func serverCounts(url string, create bool) (stmts, xacts int64, hasStmts, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, 0, false, false
	}
	defer conn.Close(ctx)
	if create {
		conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`) // refused unless preloaded: then no statement counts
	}
	hasStmts = conn.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements`).Scan(&stmts) == nil
	ok = conn.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&xacts) == nil
	return stmts, xacts, hasStmts, ok
}

// report adds statements and commits per message since m to b's metrics.
func (m serverMeter) report(b *testing.B, n int) {
	if !m.has {
		return
	}
	time.Sleep(300 * time.Millisecond) // the closed connections' backends end, and report
	stmts, xacts, hasStmts, ok := serverCounts(m.url, false)
	if ok {
		b.ReportMetric(float64(xacts-m.xacts)/float64(n), "commits/msg")
	}
	if hasStmts && m.hasStmts {
		b.ReportMetric(float64(stmts-m.stmts)/float64(n), "stmts/msg")
	}
}
