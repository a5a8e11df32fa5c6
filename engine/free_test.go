package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"leaselab/engine"
)

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
	_, sum := runToEndWith(t, sc, &engine.SessionOptions{Seed: true, FreeLatency: 7 * time.Millisecond, Sleep: sleep})
	if len(calls) != 8 || sum.ProcessingAttempts != 8 {
		t.Fatalf("%d sleeps for %d provider calls", len(calls), sum.ProcessingAttempts)
	}
	for _, d := range calls {
		if d != 7*time.Millisecond {
			t.Fatalf("slept %s, want the injected 7ms", d)
		}
	}
}

// fakeWall is a wall clock the test moves by hand.
type fakeWall struct {
	mu  sync.Mutex
	now time.Time
}

func (f *fakeWall) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeWall) Add(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// wallSession is a session of the given workers on a fresh database with messages seeded,
// on a wall clock (as "leaselab worker" runs), the provider answering at once. hold, when
// positive, makes every finalize hold its transaction open that long, calling notify.
func wallSession(t *testing.T, now func() time.Time, lease time.Duration, messages int, hold time.Duration, notify func(string), workers ...string) *engine.Session {
	t.Helper()
	ctx := context.Background()
	db := freshDB(t, "wall.db")
	if hold > 0 {
		db.HoldFinalize(hold, notify) // before the workers connect: it applies to later connections
	}
	st := engine.DefaultSettings()
	st.Lease, st.ProviderLatency, st.Heartbeat = lease, 0, false
	sc := &engine.Scenario{Name: "wall", Title: "wall clock", Source: "test", Settings: st, Messages: messages}
	for _, w := range workers {
		sc.Workers = append(sc.Workers, engine.WorkerSpec{Short: w, ID: engine.WorkerName(w)})
	}
	sess, err := engine.NewSessionWith(ctx, sc, db, engine.SessionOptions{Seed: true, Clock: engine.NewWallClock(now)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func step(t *testing.T, w *engine.Worker) engine.Event {
	t.Helper()
	ev, acted, err := w.Step(context.Background())
	if err != nil || !acted {
		t.Fatalf("%s: acted %v, %v", w.Name, acted, err)
	}
	return ev
}

// A wall-clock worker whose lease is over before its provider call does not make the call
// (another worker may own the message by now): it says so, gives the message up, and claims
// again. Today's code called the provider with the lease long gone.
func TestWallClockWorkerSkipsTheCallAfterItsLeaseEnded(t *testing.T) {
	wall := &fakeWall{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	sess := wallSession(t, wall.Now, time.Second, 1, 0, nil, "A")
	a := sess.Workers()[0]
	if ev := step(t, a); ev.Kind != engine.EvClaim || ev.Outcome != engine.OutcomeWon {
		t.Fatalf("first step: %s", ev)
	}
	wall.Add(1500 * time.Millisecond) // a GC pause, a slow disk: the lease ends meanwhile
	ev := step(t, a)
	if ev.Kind != engine.EvCheck || ev.Outcome != engine.OutcomeExpired || !strings.Contains(ev.Text, "did not call the provider") {
		t.Fatalf("with its lease over, the worker did: %s (%s)", ev, ev.Outcome)
	}
	if n := sess.Provider().Calls()["PAY-001"]; n != 0 {
		t.Fatalf("the provider was called %d times after the lease ended", n)
	}
	if l := sess.Ledger().Worker(a.Name); l.ProcessingAttempts != 0 {
		t.Fatalf("%d processing attempts counted for a call not made", l.ProcessingAttempts)
	}
	if ev := step(t, a); ev.Kind != engine.EvClaim || ev.Outcome != engine.OutcomeReclaimed || ev.Version != 2 {
		t.Fatalf("after giving it up, the worker did: %s", ev)
	}
	if ev := step(t, a); ev.Kind != engine.EvCheck || sess.Provider().Calls()["PAY-001"] != 1 {
		t.Fatalf("with a live lease, the worker did: %s", ev)
	}
	if ev := step(t, a); ev.Kind != engine.EvFinalize || ev.Outcome != engine.OutcomeCommitted {
		t.Fatalf("finalize: %s", ev)
	}
}

// The scenario clock keeps its scripts: a stale owner on it still calls the provider after its
// lease ended, because that is what lease-too-short and stale-owner teach.
func TestScenarioClockStaleOwnerStillCalls(t *testing.T) {
	for _, name := range []string{"lease-too-short", "stale-owner"} {
		sc := loadScenario(t, name, "")
		// Without the heartbeat (lease-too-short's lesson), the stale owner's call is made.
		if err := sc.Apply(engine.Overrides{Toggles: map[string]bool{engine.ToggleHeartbeat: false}}); err != nil {
			t.Fatal(err)
		}
		sess := session(t, sc)
		if err := sess.Script().RunToEnd(context.Background()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, e := range sess.Ledger().Events() {
			if e.Outcome == engine.OutcomeExpired {
				t.Fatalf("%s: a scripted worker skipped its call: %s", name, e)
			}
		}
		sum, err := sess.Summarize(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if sum.ProcessedMoreThanOnce == 0 {
			t.Errorf("%s no longer shows a message processed twice by a stale owner", name)
		}
	}
}

// A wall-clock worker that waits for the write lock prints, and schedules from, the time its
// claim took effect (read inside the transaction), not the time it started waiting: here
// Worker-B holds a finalize transaction open for 800 ms while Worker-A claims.
func TestWallClockWorkerPrintsWhenItsClaimTookEffect(t *testing.T) {
	const lease, hold = 5 * time.Second, 800 * time.Millisecond
	holding := make(chan struct{}, 1)
	sess := wallSession(t, time.Now, lease, 2, hold, func(string) { holding <- struct{}{} }, "A", "B")
	a, b := sess.Workers()[0], sess.Workers()[1]
	step(t, b) // claims PAY-001
	step(t, b) // calls the provider
	finalized := make(chan time.Time, 1)
	go func() {
		_, _, err := b.Step(context.Background()) // the finalize, holding the write lock
		if err != nil {
			t.Errorf("B's finalize: %v", err)
		}
		finalized <- time.Now()
	}()
	select {
	case <-holding:
	case <-time.After(30 * time.Second):
		t.Fatal("B's finalize never held its transaction")
	}
	asked := time.Now()
	ev := step(t, a)
	done := <-finalized
	if ev.Kind != engine.EvClaim || ev.Outcome != engine.OutcomeWon {
		t.Fatalf("A: %s", ev)
	}
	// B's finalize commits just before it returns; A's claim cannot have begun before that.
	if ev.At.Before(asked.Add(hold / 2)) {
		t.Errorf("A's claim is printed at %s, when it asked (%s), not when it took effect (after B's commit, about %s)",
			engine.FormatClock(ev.At), engine.FormatClock(asked), engine.FormatClock(done))
	}
	if got := ev.Until.Sub(ev.At); got < lease || got > lease+time.Millisecond {
		t.Errorf("A's lease runs %s from its printed time, want %s", got, lease)
	}
	if !strings.HasPrefix(ev.String(), engine.FormatClock(ev.At)) {
		t.Errorf("printed line %q", ev.String())
	}
	t.Logf("asked %s, B committed by %s, A's claim at %s until %s", engine.FormatClock(asked), engine.FormatClock(done),
		engine.FormatClock(ev.At), engine.FormatClock(ev.Until))
}
