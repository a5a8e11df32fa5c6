package stress_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/engine/stress"
	"leaselab/store"
)

// runStress runs cfg on a fresh database, and checks the database is whole after it.
func runStress(t *testing.T, cfg stress.Config) *stress.Result {
	t.Helper()
	ctx := context.Background()
	db := stressDB(t)
	res, err := stress.Run(ctx, db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := db.IntegrityCheck(ctx); ok != "ok" || err != nil {
		t.Fatalf("integrity_check %q %v", ok, err)
	}
	return res
}

// A small stress run (it also runs under -race in CI): with leasing and fencing every message
// is finalized exactly once through crashes, pauses and clock jumps; without leasing the
// checker finds the duplicates.
func TestStressSmall(t *testing.T) {
	st := engine.DefaultSettings()
	st.Fencing, st.Lease = true, 200*time.Millisecond
	cfg := stress.Config{Workers: 4, Messages: 300, CrashRate: 0.03, PauseRate: 0.03, JumpRate: 0.03, Seed: 11, Settings: st}
	res := runStress(t, cfg)
	if !res.OK() {
		t.Fatalf("with leasing and fencing: %v", res.Problems)
	}
	if res.Crashes == 0 || res.Pauses == 0 || res.ClockJumps == 0 {
		t.Fatalf("no chaos happened: %d crashes, %d pauses, %d jumps", res.Crashes, res.Pauses, res.ClockJumps)
	}
	t.Logf("crashes %d, pauses %d, jumps %d, re-processed %d, rejected %d", res.Crashes, res.Pauses, res.ClockJumps,
		res.Summary.ProcessedMoreThanOnce, res.Summary.RejectedFinalizes)

	cfg.Settings.Leasing = false
	if res := runStress(t, cfg); res.OK() || res.FinalizedTwice == 0 {
		t.Fatalf("without leasing the stress checker found nothing: %+v", res)
	}
}

// Every broken variant the lessons teach must run to the end under stress, so that its damage is
// counted rather than cut short by an error: the non-atomic claim's take may land on a row
// already finalized, and an unchecked finalize on a row another worker holds.
func TestStressWithEachSafetyOff(t *testing.T) {
	for _, c := range []struct {
		name string
		off  func(*engine.Settings)
	}{
		{"atomic-claim", func(s *engine.Settings) { s.AtomicClaim = false }},
		{"ownership-check", func(s *engine.Settings) { s.OwnershipCheck, s.Fencing = false, false }},
		{"fencing", func(s *engine.Settings) { s.Fencing = false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := engine.DefaultSettings()
			st.Fencing, st.Lease = true, 200*time.Millisecond
			c.off(&st)
			res := runStress(t, stress.Config{Workers: 4, Messages: 200, CrashRate: 0.03, PauseRate: 0.03,
				JumpRate: 0.03, Seed: 5, Settings: st})
			t.Logf("finalized twice %d, violations %d, problems %v", res.FinalizedTwice, res.Summary.OwnershipViolations, res.Problems)
			if c.name == "atomic-claim" && res.OK() {
				t.Fatal("with the non-atomic claim the stress checker found nothing")
			}
		})
	}
}

// The stress table's "least share" is the least busy worker's share of the processing; the total
// row shows the least of the runs.
func TestWriteStressLeastShare(t *testing.T) {
	run := func(seed int64, byWorker map[string]int) *stress.Result {
		return &stress.Result{Seed: seed, Elapsed: time.Second,
			Summary: &engine.Summary{ProcessedByWorker: byWorker}}
	}
	var out strings.Builder
	err := stress.WriteResults(&out, engine.DefaultSettings(), []*stress.Result{
		run(1, map[string]int{"Worker-1": 1, "Worker-2": 3}),
		run(2, map[string]int{"Worker-1": 0, "Worker-2": 5}),
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	want := map[string]string{"1": "25.0 %", "2": "0.0 %", "total": "0.0 %"}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 0 && want[f[0]] != "" {
			if !strings.Contains(l, want[f[0]]) {
				t.Errorf("row %s: %q, want least share %s", f[0], l, want[f[0]])
			}
			delete(want, f[0])
		}
	}
	if len(want) > 0 {
		t.Fatalf("rows missing %v:\n%s", want, out.String())
	}
}

// BenchmarkStress is a whole stress run (seeding, eight workers, the checks) at three sizes, with
// the command's defaults (a 1% crash, pause and clock-jump rate). It reports messages per second
// of the run's own elapsed time, and the messages processed more than once; time per message
// stays flat as the size grows when nothing in the run is quadratic. The 100,000-message run
// takes a minute or two: go test -run X -bench Stress -benchtime 1x ./engine/
func BenchmarkStress(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("messages-%d", n), func(b *testing.B) {
			st := engine.DefaultSettings()
			st.Fencing, st.Lease = true, 200*time.Millisecond
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				ctx := context.Background()
				db, err := store.Create(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("stress-%d.db", i)))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				cfg := stress.Config{Workers: 8, Messages: n, CrashRate: 0.01, PauseRate: 0.01, JumpRate: 0.01, Seed: int64(i), Settings: st}
				res, err := stress.Run(ctx, db, cfg, nil)
				b.StopTimer()
				db.Close()
				if err != nil {
					b.Fatal(err)
				}
				if !res.OK() {
					b.Fatalf("stress checks failed: %v", res.Problems)
				}
				elapsed += res.Elapsed
			}
			b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "messages/s")
		})
	}
}

// stressDB is a fresh database for one stress run.
func stressDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Create(context.Background(), filepath.Join(t.TempDir(), "stress.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// The timeout covers the seeding, and a run it cuts short is a failed result, not an error: its
// messages not Processed are unfinished, none lost. Today a timeout while seeding was an error
// (exit 3), and a run cut later reported every unfinished message as lost.
func TestStressTimeoutCountsUnfinishedNotLost(t *testing.T) {
	st := engine.DefaultSettings()
	st.Fencing, st.Lease = true, 200*time.Millisecond
	for _, c := range []struct {
		name     string
		messages int
		timeout  time.Duration
	}{
		{"while seeding", 50, time.Nanosecond},
		{"while working", 3000, 1500 * time.Millisecond}, // seeding takes about a second here
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := stress.Config{Workers: 4, Messages: c.messages, CrashRate: 0.02, Seed: 3, Settings: st, Timeout: c.timeout}
			res, err := stress.Run(context.Background(), stressDB(t), cfg, nil)
			if err != nil {
				t.Fatalf("a timed-out run is a result, not an error: %v", err)
			}
			if !res.TimedOut {
				t.Skipf("the run finished within %s on this machine", c.timeout)
			}
			if res.OK() || res.Lost() != 0 || res.Unfinished == 0 || res.Unfinished != c.messages-res.Summary.Outbox.Processed {
				t.Fatalf("ok %v, lost %d, unfinished %d of %d (processed %d), problems %v", res.OK(), res.Lost(), res.Unfinished,
					c.messages, res.Summary.Outbox.Processed, res.Problems)
			}
			t.Logf("%d processed, %d unfinished: %v", res.Summary.Outbox.Processed, res.Unfinished, res.Problems)
		})
	}
}

// An interrupt (the caller's ctx ends) is not a result: Stress returns an error that wraps the
// context's cause, so that the command can say "interrupted" and drop the unfinished run.
func TestStressInterruptIsAnError(t *testing.T) {
	st := engine.DefaultSettings()
	st.Fencing, st.Lease = true, 200*time.Millisecond
	stop := errors.New("interrupted by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { cancel(stop) })
	cfg := stress.Config{Workers: 4, Messages: 3000, CrashRate: 0.02, Seed: 3, Settings: st}
	res, err := stress.Run(ctx, stressDB(t), cfg, nil)
	if !errors.Is(err, stop) || res != nil {
		t.Fatalf("interrupted run: result %v, error %v; want no result and an error wrapping the cause", res, err)
	}
}

// Hosted workers (Slots) under stress: four of eight slots each finalize every message exactly
// once, none lost, none left Processing; the fetches took several messages at a time.
func TestStressHostedWorkers(t *testing.T) {
	st := engine.DefaultSettings()
	st.Fencing, st.Lease = true, 2*time.Second
	res := runStress(t, stress.Config{Workers: 4, Messages: 600, Seed: 3, Settings: st, Slots: 8})
	if !res.OK() || res.FinalizedTwice != 0 || res.Lost() != 0 || res.StuckProcessing != 0 {
		t.Fatalf("hosted workers: %v (%+v)", res.Problems, res)
	}
	if res.Summary.ClaimsWon < 600 {
		t.Fatalf("%d claims counted for 600 messages", res.Summary.ClaimsWon)
	}
	// They were hosted workers: a fetch claimed for several slots, a batch finalized several.
	h := res.Hosted
	if h == nil || h.Claimed != res.Summary.ClaimsWon || h.Fetches == 0 || h.Fetches >= h.Claimed || h.MaxBatch < 2 || h.Finalized != 600 {
		t.Fatalf("hosted counts %+v: want every claim counted, fetches of several, batches of several, 600 finalized", h)
	}
}

// The rescuer in stress: a sweeper on its own goroutine and connection beside the workers. With
// its guard on, every message is finalized exactly once, none lost, and each lease it read got
// its UPDATE, rescued (1 row) or refused (0 rows); with the guard off, the race of River #1302
// happens for real (a finalize commits between the sweep's read and its write) and the checks
// catch it: a finished message set back to Pending and finalized again. Short leases and
// frequent clock jumps end leases under working workers, so that the race has many chances: in
// 15 runs of 300 messages it was caught in 12; with 1,000 it is all but certain, and the test
// allows a second run (another seed) before it calls the race missed.
func TestStressRescuer(t *testing.T) {
	for _, guarded := range []bool{true, false} {
		t.Run(fmt.Sprintf("guarded-rescue=%v", guarded), func(t *testing.T) {
			for try := int64(0); ; try++ {
				cfg := rescuerConfig(guarded, 1000)
				cfg.Seed += try
				res := runStress(t, cfg)
				r := res.Rescuer
				if r == nil || r.Sweeps == 0 || r.Rescued+r.Refused != r.Seen {
					t.Fatalf("the rescuer did not sweep, or left a lease it read without its UPDATE: %+v", r)
				}
				t.Logf("seed %d: sweeps %d, seen %d, rescued %d, refused %d, undid a finish %d; finalized twice %d, lost %d, problems %v",
					cfg.Seed, r.Sweeps, r.Seen, r.Rescued, r.Refused, r.RescuedFinished, res.FinalizedTwice, res.Lost(), res.Problems)
				if guarded {
					if !res.OK() || r.RescuedFinished != 0 || res.FinalizedTwice != 0 || res.Lost() != 0 {
						t.Fatalf("with the guard: %v", res.Problems)
					}
					return
				}
				caught := !res.OK() && r.RescuedFinished > 0 && res.FinalizedTwice > 0
				if caught {
					return
				}
				if try == 1 {
					t.Fatalf("without the guard the checks caught no race in two runs: %+v %v", r, res.Problems)
				}
			}
		})
	}
}

// rescuerConfig is a small stress run with a rescuer that sweeps every millisecond, guarded or
// not: short leases, pauses and frequent clock jumps, so that leases end under working workers.
func rescuerConfig(guarded bool, messages int) stress.Config {
	st := engine.DefaultSettings()
	st.Fencing, st.Lease, st.GuardedRescue = true, 50*time.Millisecond, guarded
	return stress.Config{Workers: 4, Messages: messages, CrashRate: 0.01, PauseRate: 0.05, JumpRate: 0.1, Seed: 7,
		Settings: st, Rescuer: true, RescueEvery: time.Millisecond}
}
