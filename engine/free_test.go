package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"
)

// runToEndWith is runToEnd on a session opened with opt.
func runToEndWith(t testing.TB, sc *engine.Scenario, opt engine.SessionOptions) (*engine.Session, *engine.Summary) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Create(ctx, filepath.Join(t.TempDir(), "leaselab.db"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.NewSessionWith(ctx, sc, db, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		db.Close()
	})
	if err := s.RunToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, sum
}

// after's concurrent phase is a contest: both workers process some of the five messages it
// leaves them (PAY-001 is the lease-expiry demo's). Without a provider latency one worker took
// all five in about 19 runs of 20; the bound here is loose (half the runs) so that a loaded
// machine cannot make it fail, and the old code cannot pass it.
func TestAfterConcurrentPhaseIsAContest(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 6
	}
	both, splits := 0, map[string]int{}
	for i := 0; i < runs; i++ {
		s, sum := runToEnd(t, loadScenario(t, "after", ""))
		if sum.ProcessedMoreThanOnce != 0 || !sum.Passed {
			t.Fatalf("run %d: %d processed more than once, passed %v", i, sum.ProcessedMoreThanOnce, sum.Passed)
		}
		a, b := splitOf(t, s)
		splits[fmt.Sprintf("%d/%d", a, b)]++
		if a > 0 && b > 0 {
			both++
		}
	}
	t.Logf("concurrent phase A/B over %d runs: %v", runs, splits)
	if both*2 < runs {
		t.Fatalf("both workers processed some of the five in only %d of %d runs: %v", both, runs, splits)
	}
}

// splitOf reads the concurrent phase's split from the note that ends it.
func splitOf(t *testing.T, s *engine.Session) (a, b int) {
	t.Helper()
	for _, e := range s.Ledger().Events() {
		if rest, ok := strings.CutPrefix(e.Text, "concurrent phase done: "); ok && e.Kind == engine.EvNote {
			if _, err := fmt.Sscanf(rest, "Worker-A %d, Worker-B %d processed", &a, &b); err != nil {
				t.Fatalf("note %q: %v", e.Text, err)
			}
			return a, b
		}
	}
	t.Fatal("no note ends the concurrent phase")
	return 0, 0
}

// The provider latency of a concurrent step is injected: the session's Sleep is called once per
// provider call with the latency, and nothing sleeps for real.
func TestConcurrentLatencyIsInjected(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []time.Duration
	)
	sleep := func(_ context.Context, d time.Duration) {
		mu.Lock()
		calls = append(calls, d)
		mu.Unlock()
	}
	sc := loadScenario(t, "", "name: c\nmessages: 8\nworkers: 2\nsteps:\n  concurrent\n")
	_, sum := runToEndWith(t, sc, engine.SessionOptions{Seed: true, FreeLatency: 7 * time.Millisecond, Sleep: sleep})
	if len(calls) != 8 || sum.ProcessingAttempts != 8 {
		t.Fatalf("%d sleeps for %d provider calls", len(calls), sum.ProcessingAttempts)
	}
	for _, d := range calls {
		if d != 7*time.Millisecond {
			t.Fatalf("slept %s, want the injected 7ms", d)
		}
	}
}
