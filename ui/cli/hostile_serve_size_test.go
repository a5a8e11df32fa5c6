package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"leaselab/ui"
)

// sizeBound is what a client's window size may make the server hold, over what it held with
// the other attendee's lab open, in heap in use and in RSS: the sizes are fitted to
// ui.MaxWidth×ui.MaxHeight, a few hundred kilobytes a frame, and a lab's own database and
// screens are a few megabytes more (measured: heap +2 to +3 MB, RSS +2 to +5 MB).
const sizeBound = 48 << 20

// memNow is the heap in use (live objects and what they fragment) and the process's RSS.
func memNow() (heapInuse, rss uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			rss = kb << 10
		}
	}
	return ms.HeapInuse, rss
}

// One attendee's terminal size must not bring the room down. A pty request for 2^31 columns and
// 2^32−1 rows made the server run out of memory in the lab's View (every lab cut off); a window
// change to 2147483648×24 left 7.4 GB held. Here an attendee asks for both, then for 2^32−1
// columns, then sends 3,000 window changes of mixed sizes: the server stays up, its heap grows
// by less than sizeBound, the absurd client reads a line that says what it gets and a screen of
// a sane size, and the other attendee's lab goes on.
func TestServeAbsurdWindowSizes(t *testing.T) {
	ts := startServer(t, serveOptions{})
	a := ts.connect(t, dialOpts{user: "ana"})
	a.waitFor("PAY-006")
	runtime.GC()
	heap0, rss0 := memNow()

	var peakHeap, peakRSS uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			h, r := memNow()
			mu.Lock()
			peakHeap, peakRSS = max(peakHeap, h), max(peakRSS, r)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()

	b := ts.connect(t, dialOpts{user: "huge", w: 1 << 31, h: 1<<32 - 1})
	b.waitFor(fmt.Sprintf("leaselab: your terminal asks for %d×%d cells; the lab draws in at most %d×%d", 1<<31, 1<<32-1, ui.MaxWidth, ui.MaxHeight))
	b.waitFor("PAY-006")
	for _, s := range [][2]int{{1 << 31, 24}, {1<<32 - 1, 24}, {1<<32 - 1, 1<<32 - 1}} {
		if err := b.sess.WindowChange(s[1], s[0]); err != nil {
			t.Fatal(err)
		}
	}
	b.waitFor(fmt.Sprintf("this terminal is %d×%d", 1<<32-1, 1<<32-1))
	rng := rand.New(rand.NewPCG(29, 4))
	sizes := []int{0, 1, 24, 80, 120, 500, 501, 100000, 1 << 31, 1<<32 - 1}
	for range 3000 {
		if err := b.sess.WindowChange(sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))]); err != nil {
			t.Fatal(err)
		}
	}
	// The last change a sane size: the screen is the lab again, not the too-small one.
	if err := b.sess.WindowChange(40, 120); err != nil {
		t.Fatal(err)
	}
	b.press(" ")
	b.waitFor("Worker-A claimed PAY-001")

	// The other lab goes on, and answers as before.
	a.press(" ")
	a.waitFor("Worker-A claimed PAY-001")
	close(stop)
	<-sampled
	if n := len(ts.waitSessions(t, 2)); n != 2 {
		t.Fatalf("%d labs open", n)
	}
	grew := int64(peakHeap) - int64(heap0)
	t.Logf("heap in use %.1f MB before, peak %.1f MB (+%.1f MB); RSS %.1f MB before, peak %.1f MB",
		mb(heap0), mb(peakHeap), float64(grew)/(1<<20), mb(rss0), mb(peakRSS))
	if grew > sizeBound {
		t.Errorf("the heap grew by %.1f MB for one client's window sizes, more than the bound of %d MB", float64(grew)/(1<<20), sizeBound>>20)
	}
	// SQLite's pages are not Go's heap (modernc.org/sqlite allocates its own): RSS counts them
	// too, the second lab's database with them.
	if rssGrew := int64(peakRSS) - int64(rss0); rssGrew > sizeBound {
		t.Errorf("RSS grew by %.1f MB with a second lab of absurd sizes, more than the bound of %d MB", float64(rssGrew)/(1<<20), sizeBound>>20)
	}
	if !strings.Contains(ts.log.String(), fmt.Sprintf("window %d×%d asked for, drawn in %d×%d", 1<<31, 1<<32-1, ui.MaxWidth, ui.MaxHeight)) {
		t.Errorf("no log line for the fitted window:\n%s", ts.log.String())
	}
	if !t.Failed() {
		recordReliability(t, "serve", "a pty of 2^31 columns × 2^32−1 rows, window changes to 2^31×24 and 2^32−1×2^32−1, then 3,000 of mixed sizes", exitOK,
			fmt.Sprintf("leaselab: your terminal asks for 2147483648×4294967295 cells; the lab draws in at most %d×%d, at its top left; heap +%.0f MB at its peak (bound %d MB); the other lab goes on",
				ui.MaxWidth, ui.MaxHeight, float64(max(grew, 0))/(1<<20), sizeBound>>20), "—")
	}
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }
