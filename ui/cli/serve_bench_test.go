package cli

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// BenchmarkServe30Sessions opens 30 labs over SSH, on the playground (the workshop's: 6
// messages, 2 workers) and on many-workers (500 messages, 8 workers): 15 free-run (g, the default 100 ms pace) and 15 are stepped by key presses. Each iteration is
// one key press (s: the selected worker's next action, a real transaction) in each stepped lab
// at once; the latency is from the key's write to the client's read of the screen showing the
// new step count. It reports the median and p95 latency, the resident memory and the Go heap
// the labs added (server and in-process clients alike; each client keeps its last 64 KiB of
// screen), and the process's CPU over the timed part, in % of one core.
//
//	go test -run - -bench Serve30 -benchtime 20x ./ui/cli
func BenchmarkServe30Sessions(b *testing.B) {
	for _, sc := range []string{"playground", "many-workers"} {
		b.Run(sc, func(b *testing.B) { benchServe(b, sc, sc, 15, 15) })
	}
}

// BenchmarkServeRoom is the workshop's room at its busiest: 30 labs over SSH, 25 of them
// free-running many-workers (g: 500 messages, 8 workers each, the default pace) and 5 on the
// playground stepped by key presses, as the rest of the room would. It reports the key-to-screen
// latency in the 5 (median, p95, max), the messages the free runs processed a second meanwhile,
// and the memory and CPU as BenchmarkServe30Sessions does.
//
//	go test -run - -bench ServeRoom -benchtime 40x ./ui/cli
func BenchmarkServeRoom(b *testing.B) {
	benchServeThink(b, "many-workers", "playground", 25, 5, roomThink)
}

// roomThink is how long a person in the room waits between two key presses at most: reading
// the screen takes longer; this is typing fast.
const roomThink = 250 * time.Millisecond

// BenchmarkServe1Session is the same key press with one lab open: the floor the 30 labs are
// measured against on a loaded machine.
func BenchmarkServe1Session(b *testing.B) { benchServe(b, "playground", "playground", 0, 1) }

// benchServe opens free labs on freeScenario, each free-running, and stepped labs on
// stepScenario, and times key presses in the stepped ones.
func benchServe(b *testing.B, freeScenario, stepScenario string, free, stepped int) {
	benchServeThink(b, freeScenario, stepScenario, free, stepped, 0)
}

// benchServeThink is benchServe with a pause of think between two presses in a stepped lab.
func benchServeThink(b *testing.B, freeScenario, stepScenario string, free, stepped int, think time.Duration) {
	t0 := time.Now()
	ts := startServer(b, serveOptions{maxSessions: free + stepped})
	rss0, heap0 := residentKiB(b), heapInUse()
	var all, steppers []*attendee
	for i := range free + stepped {
		scenario := stepScenario
		if i < free {
			scenario = freeScenario
		}
		a := ts.connect(b, dialOpts{user: fmt.Sprintf("bench%02d", i), command: scenario})
		a.waitFor("PAY-")
		a.out.mu.Lock()
		a.out.limit = 64 << 10 // the client keeps the last screens only, not minutes of them
		a.out.mu.Unlock()
		all = append(all, a)
		if i < free {
			a.press("g")
			a.waitFor("FREE-RUNNING")
		} else {
			steppers = append(steppers, a)
		}
	}
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs []error // the workers' failures: b.Fatal may be called from the benchmark's goroutine only
	)
	steps := make([]int, len(steppers))
	b.Logf("%d labs open in %s (%d free-running %s, %d stepped on %s)", free+stepped, time.Since(t0).Round(time.Millisecond),
		free, freeScenario, stepped, stepScenario)
	// processed is how many messages the free-running labs have processed so far.
	processed := func() int {
		n := 0
		for _, in := range ts.srv.Sessions() {
			if in.Status.Free {
				n += in.Status.Processed
			}
		}
		return n
	}
	cpu0, wall0, done0 := cpuTime(), time.Now(), processed()
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for i, a := range steppers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				steps[i]++
				d, err := keyToScreen(a, "s", fmt.Sprintf("step %d", steps[i]))
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					lat = append(lat, d)
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			b.Fatal(errors.Join(errs...))
		}
		time.Sleep(think)
	}
	b.StopTimer()
	cpu, wall, done := cpuTime()-cpu0, time.Since(wall0), processed()-done0
	rss, heap := residentKiB(b), heapInUse()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(1), "max-ms")
	b.ReportMetric(float64(rss-rss0)/1024/float64(len(all)), "rss-MiB/session")
	b.ReportMetric(float64(heap-heap0)/(1<<20)/float64(len(all)), "heap-MiB/session")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%")
	if free > 0 {
		b.ReportMetric(float64(done)/wall.Seconds(), "free-msgs/s")
	}
	b.ReportMetric(0, "ns/op")
	for _, a := range all {
		a.hangUp()
	}
	ts.waitSessions(b, 0)
}

// keyToScreen writes key and waits until the output written after it shows want (escapes
// stripped); it returns how long that took. It runs on a worker goroutine, so it returns its
// failure for the benchmark's goroutine to report.
func keyToScreen(a *attendee, key, want string) (time.Duration, error) {
	from := a.out.Len()
	start := time.Now()
	if _, err := a.stdin.Write([]byte(key)); err != nil {
		return 0, fmt.Errorf("key %q: %w", key, err)
	}
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		if strings.Contains(ansi.Strip(a.out.From(from)), want) {
			return time.Since(start), nil
		}
		select {
		case <-a.drawn:
		case <-deadline.C:
			return 0, fmt.Errorf("%q never showed after %q", want, key)
		}
	}
}

// residentKiB is the process's resident set (VmRSS), in KiB.
func residentKiB(tb testing.TB) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	tb.Skip("no VmRSS")
	return 0
}

// heapInUse is the Go heap in use after a collection, in bytes.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
