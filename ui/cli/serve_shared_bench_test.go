package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"leaselab/engine/room"
)

// BenchmarkServeSharedRoom is a workshop's room at full tilt: 30 attendees over SSH (in-process
// golang.org/x/crypto/ssh clients) on one shared room on one SQLite file, each pressing space
// at 5 keys a second for 60 s (LEASELAB_ROOM_SECONDS and LEASELAB_ROOM_CLIENTS change them), each press their worker's next
// action (claim, provider call, finalize), a real transaction on the fair write-lock queue. The
// latency is from a key's write to the client's read of the screen showing that attendee's
// action count one higher. It reports the median, p95 and max over all presses, the worst
// client's p95, the claims won per attendee (the fewest and the median: no attendee starved of
// the write lock), the resident memory (before, its peak, and after the clients left, in MiB;
// server and clients share the process) and the CPU (% of one core). The machine's load average
// is logged before and after: the figures mean little on a machine busy with other work.
//
//	go test -run - -bench ServeSharedRoom -benchtime 1x -timeout 10m ./ui/cli
func BenchmarkServeSharedRoom(b *testing.B) {
	const rate = 5
	clients, seconds := 30, 60
	if s, err := strconv.Atoi(os.Getenv("LEASELAB_ROOM_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	if n, err := strconv.Atoi(os.Getenv("LEASELAB_ROOM_CLIENTS")); err == nil && n > 0 {
		clients = n
	}
	messages := clients * rate * max(seconds, 60) / 3 * 5 / 4 // every third press claims; a quarter spare (the table of a 60 s run in a shorter one)
	b.Logf("load average before: %s", loadAverage())
	rss0 := residentKiB(b)
	s := startShared(b, newSigner(b), "--shared", "playground", "--messages", strconv.Itoa(min(messages, sharedMaxMessages)), "--max-sessions", "40")
	var all []*attendee
	for i := range clients {
		a := s.connect(b, dialOpts{user: fmt.Sprintf("att%02d", i), w: 100, h: 30})
		a.waitFor("[your actions: 0]")
		a.out.mu.Lock()
		a.out.limit = 64 << 10
		a.out.mu.Unlock()
		all = append(all, a)
	}
	rssJoined := residentKiB(b)
	var (
		mu   sync.Mutex
		lat  = make([][]time.Duration, clients)
		errs []error
		peak = rssJoined
	)
	stopPeak := make(chan struct{})
	go func() { // the resident set's peak, once a second
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopPeak:
				return
			case <-t.C:
				if r := residentKiB(b); r > peak {
					mu.Lock()
					peak = r
					mu.Unlock()
				}
			}
		}
	}()
	cpu0, wall0 := cpuTime(), time.Now()
	b.ResetTimer()
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	var wg sync.WaitGroup
	for i, a := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * time.Second / rate / time.Duration(clients)) // spread the first presses
			tick := time.NewTicker(time.Second / rate)
			defer tick.Stop()
			for n := 1; time.Now().Before(end); n++ {
				d, err := keyToScreen(a, " ", fmt.Sprintf("[your actions: %d]", n))
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("att%02d: %w", i, err))
				} else {
					lat[i] = append(lat[i], d)
				}
				mu.Unlock()
				if err != nil {
					return
				}
				<-tick.C
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(stopPeak)
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	if len(errs) > 0 {
		b.Fatal(errors.Join(errs...))
	}
	f, err := s.room.room.Frame(context.Background(), room.FrameOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var claims []int
	for _, seat := range f.Seats {
		claims = append(claims, seat.Claims)
	}
	slices.Sort(claims)
	var every []time.Duration
	worst := time.Duration(0)
	for _, l := range lat {
		slices.Sort(l)
		worst = max(worst, pctOf(l, 0.95))
		every = append(every, l...)
	}
	slices.Sort(every)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(pctOf(every, 0.50)), "p50-ms")
	b.ReportMetric(ms(pctOf(every, 0.95)), "p95-ms")
	b.ReportMetric(ms(every[len(every)-1]), "max-ms")
	b.ReportMetric(ms(worst), "worst-client-p95-ms")
	b.ReportMetric(float64(claims[0]), "min-claims")
	b.ReportMetric(float64(claims[len(claims)/2]), "median-claims")
	b.ReportMetric(float64(len(every))/wall.Seconds(), "keys/s")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%")
	b.ReportMetric(float64(rss0)/1024, "rss-before-MiB")
	b.ReportMetric(float64(rssJoined)/1024, "rss-joined-MiB")
	b.ReportMetric(float64(peak)/1024, "rss-peak-MiB")
	b.ReportMetric(0, "ns/op")
	b.Logf("%d presses in %s; claims won per attendee %v; %d processed of %d; %s", len(every), wall.Round(time.Millisecond),
		claims, f.Counts.Processed, f.Messages, f.Board.Headline)
	for _, a := range all {
		a.hangUp()
	}
	time.Sleep(2 * time.Second)
	b.ReportMetric(float64(residentKiB(b))/1024, "rss-after-MiB")
	b.Logf("load average after: %s", loadAverage())
}

// pctOf is the p-th quantile of sorted ds.
func pctOf(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(p*float64(len(ds))))]
}

// loadAverage is the machine's load average (1, 5 and 15 minutes), as /proc/loadavg says it.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
