package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// StressConfig is one stress run: real goroutine workers on separate connections with random
// crashes, pauses and clock jumps.
type StressConfig struct {
	Workers   int
	Messages  int
	CrashRate float64 // per action and worker: crash, then restart a moment later
	PauseRate float64 // per action and worker: pause for a moment (it keeps what it holds)
	JumpRate  float64 // per action and worker: move the scenario clock by up to one lease
	Seed      int64
	Settings  Settings
	// Timeout is the real-time limit of the run, seeding included; 0: DefaultStressTimeout. A
	// run cut by it is a result (TimedOut, its unfinished messages counted as such), not an
	// error.
	Timeout time.Duration
}

// StressResult is what a stress run did and what its checks found.
type StressResult struct {
	Seed       int64
	Summary    *Summary
	Crashes    int
	Pauses     int
	ClockJumps int
	// Finalized counts committed finalizes per message; exactly one each is the guarantee.
	FinalizedTwice int
	// NeverFinalized counts messages with no committed finalize, except, in a run cut by its
	// timeout, those still unfinished in the database (Unfinished): those were not lost, the
	// run ended before their turn.
	NeverFinalized int
	// TimedOut: the run reached StressConfig.Timeout (perhaps while seeding) before every
	// message was Processed.
	TimedOut bool
	// Unfinished counts, in a timed-out run, the messages not Processed when it stopped
	// (Pending, Processing, or not yet created by the seeding).
	Unfinished      int
	StuckProcessing int // rows left Processing with an expired lease
	Elapsed         time.Duration
	Problems        []string
}

// OK reports whether every stress check held.
func (r *StressResult) OK() bool { return len(r.Problems) == 0 }

// Lost is the number of messages lost: never finalized although the run gave them time. In a
// run that ran to its end that is every message without a finalize or not Processed; in a run
// cut by its timeout, unfinished messages are counted in Unfinished, not here.
func (r *StressResult) Lost() int {
	if r.TimedOut || r.Summary == nil {
		return r.NeverFinalized
	}
	return max(r.NeverFinalized, r.Summary.Lost)
}

// Stress seeds db and runs cfg until every message is Processed (or the timeout), then checks:
// every message finalized exactly once, none lost, no ownership violation, no row left
// Processing past its lease. progress, when set, is called with the processed count now and
// then. The seed fixes each worker's chaos schedule; the interleaving of real goroutines is the
// operating system's, so a failing seed reproduces the conditions, not the exact schedule.
//
// When ctx ends (an interrupt), Stress returns an error that wraps context.Cause(ctx): the run
// did not finish and has no result. When the run's own Timeout ends it, seeding included, the
// result says so (TimedOut, Unfinished) and fails its checks.
func Stress(ctx context.Context, db DB, cfg StressConfig, progress func(done, total int)) (*StressResult, error) {
	sc := &Scenario{Name: "stress", Title: "stress", Source: "stress", Messages: cfg.Messages,
		Settings: cfg.Settings, Pass: "EVERY STRESS CHECK HELD ✅", Failure: "A STRESS CHECK FAILED ❌", Seed: cfg.Seed}
	sc.SetWorkers(cfg.Workers)
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultStressTimeout(cfg.Messages)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	s, err := NewSession(ctx, sc, db)
	switch {
	case err != nil && parent.Err() != nil:
		return nil, fmt.Errorf("stress: %w", context.Cause(parent))
	case err != nil && ctx.Err() != nil:
		return seedTimedOut(parent, db, cfg, time.Since(start)), nil
	case err != nil:
		return nil, err
	}
	defer s.Close()

	res := &StressResult{Seed: cfg.Seed}
	var (
		done                   atomic.Bool
		crashes, pauses, jumps atomic.Int64
		wg                     sync.WaitGroup
		errMu                  sync.Mutex
		runErr                 error
	)
	for i := range s.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(i)+1))
			if err := s.chaosWorker(ctx, i, rng, cfg, &done, &crashes, &pauses, &jumps); err != nil {
				errMu.Lock()
				runErr = err
				errMu.Unlock()
				cancel()
			}
		}()
	}
	// The driver: report progress, and when every live worker is idle behind a live lease
	// (its owner crashed or paused), move the clock just past it, as time would. Progress is
	// the ledger's count of messages written; the database's counts, a read of every row, are
	// read to confirm the end, and now and then in case the database has rows of its own.
	var countsAt time.Time
	countsEvery := time.Second
	for !done.Load() {
		finished := s.ledger.finishedCount()
		if progress != nil {
			progress(min(finished, cfg.Messages), cfg.Messages)
		}
		if finished >= cfg.Messages || time.Since(countsAt) >= countsEvery {
			t0 := time.Now()
			c, err := db.Counts(ctx)
			if err != nil && ctx.Err() != nil && parent.Err() == nil {
				// The run's timeout (or a worker's error) ended the read: the run is cut, not
				// broken, and what it did is counted below.
				break
			}
			if err != nil {
				cancel()
				wg.Wait()
				if runErr != nil {
					return nil, runErr
				}
				return nil, fmt.Errorf("stress: %w (after %s)", err, time.Since(start).Round(time.Millisecond))
			}
			countsAt, countsEvery = time.Now(), max(time.Second, 20*time.Since(t0))
			if c.OutboxProcessed == c.Messages {
				if progress != nil {
					progress(c.OutboxProcessed, c.Messages)
				}
				done.Store(true)
				break
			}
		}
		if len(runnable(s.workers)) == 0 {
			if _, err := s.ClockPastLease(ctx); err == nil {
				jumps.Add(1)
			}
		}
		select {
		case <-ctx.Done():
			done.Store(true)
		case <-time.After(2 * time.Millisecond):
		}
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	if parent.Err() != nil {
		return nil, fmt.Errorf("stress: %w", context.Cause(parent))
	}
	if runErr != nil {
		return nil, runErr
	}
	// Every row is Processed, but a worker may still hold a stale lease (paused, or slow): let
	// each finish what it holds, so that a stale write, if the guards allow one, is counted.
	if err := s.drain(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	res.Crashes, res.Pauses, res.ClockJumps = int(crashes.Load()), int(pauses.Load()), int(jumps.Load())
	if res.Summary, err = s.Summarize(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	return res, s.stressChecks(context.WithoutCancel(ctx), res, ctx.Err() != nil)
}

// DefaultStressTimeout is a stress run's real-time limit when none is given: 5 minutes, or 2 ms
// per message for more than 150,000 (a 1,000,000-message run took 13 minutes on a shared 2-core
// machine, about 0.8 ms per message, seeding included; the limit leaves more than twice that).
func DefaultStressTimeout(messages int) time.Duration {
	return max(5*time.Minute, time.Duration(messages)*2*time.Millisecond)
}

// seedTimedOut is the result of a run whose timeout ended it while it was still seeding: no
// worker ran, and every message is unfinished, none lost.
func seedTimedOut(parent context.Context, db DB, cfg StressConfig, elapsed time.Duration) *StressResult {
	created := 0
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), 5*time.Second)
	defer cancel()
	if c, err := db.Counts(ctx); err == nil {
		created = c.Messages
	}
	res := &StressResult{Seed: cfg.Seed, TimedOut: true, Unfinished: cfg.Messages, Elapsed: elapsed,
		Summary: &Summary{Messages: cfg.Messages, ProcessedByWorker: map[string]int{}}}
	res.Problems = append(res.Problems, fmt.Sprintf("timed out after %s while seeding (%d of %d messages created): %d messages unfinished (timeout)",
		elapsed.Round(time.Millisecond), created, cfg.Messages, cfg.Messages))
	return res
}

// chaosWorker runs worker i until done, and after each action maybe crashes it (restarting it
// a moment later), pauses it, or jumps the clock.
func (s *Session) chaosWorker(ctx context.Context, i int, rng *rand.Rand, cfg StressConfig, done *atomic.Bool, crashes, pauses, jumps *atomic.Int64) error {
	w := s.workers[i]
	for !done.Load() && ctx.Err() == nil {
		if !w.Runnable() {
			time.Sleep(200 * time.Microsecond)
			continue
		}
		_, acted, err := w.Step(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if !acted {
			continue
		}
		r := rng.Float64()
		switch {
		case r < cfg.CrashRate:
			if _, err := s.Crash(i); err == nil {
				crashes.Add(1)
			}
			time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
			if _, err := s.Restart(ctx, i); err != nil && ctx.Err() == nil {
				return err
			}
		case r < cfg.CrashRate+cfg.PauseRate:
			if _, err := s.SetPaused(i, true); err == nil {
				pauses.Add(1)
			}
			time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
			s.SetPaused(i, false)
		case r < cfg.CrashRate+cfg.PauseRate+cfg.JumpRate:
			s.AdvanceClock(time.Duration(1+rng.Int64N(s.Settings().Lease.Milliseconds())) * time.Millisecond)
			jumps.Add(1)
		}
	}
	return nil
}

// drain wakes every worker and steps each until it holds nothing: no message in progress and
// no loaded rows.
func (s *Session) drain(ctx context.Context) error {
	for i, w := range s.workers {
		v := w.View()
		if v.Paused {
			if _, err := s.SetPaused(i, false); err != nil {
				return err
			}
		}
		for n := 0; n < 1_000_000; n++ {
			v = w.View()
			if v.Crashed || (v.Holding == "" && v.Queue == 0) {
				break
			}
			if w.Next() == ActNone { // waiting on a provider answer: it is due now or later
				if t := w.Timer(); !t.IsZero() {
					s.SetClock(t)
				}
			}
			if _, _, err := w.Step(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Session) stressChecks(ctx context.Context, res *StressResult, timedOut bool) error {
	sum := res.Summary
	// Written twice, and two owners at once, are the Summary's own counts (one definition for
	// stress and every report); only the messages never written are stress's own.
	res.FinalizedTwice = sum.FinalizedMoreThanOnce
	unfinished := map[string]bool{} // rows not Processed when a timed-out run stopped
	now := s.clock.Now()
	err := s.db.EachRow(ctx, func(r Row) error {
		if r.Status == StatusProcessing && r.LockedUntil.Before(now) && !timedOut {
			res.StuckProcessing++ // a run cut short leaves leases behind: that is not a fault
		}
		if timedOut && r.Status != StatusProcessed {
			unfinished[r.IdempotencyKey] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.gateway.eachKey(func(k keyRef) {
		if key := k.String(); s.ledger.commitsOf(key) == 0 && !unfinished[key] {
			res.NeverFinalized++
		}
	})
	res.TimedOut = timedOut
	if timedOut {
		res.Unfinished = sum.Messages - sum.Outbox.Processed
	}
	add := func(ok bool, format string, args ...any) {
		if !ok {
			res.Problems = append(res.Problems, fmt.Sprintf(format, args...))
		}
	}
	add(!timedOut, "timed out after %s with %d of %d processed: %d %s unfinished (timeout)",
		res.Elapsed.Round(time.Millisecond), sum.Outbox.Processed, sum.Messages, res.Unfinished, plural(res.Unfinished, "message"))
	add(res.FinalizedTwice == 0, "%d %s finalized more than once", res.FinalizedTwice, plural(res.FinalizedTwice, "message"))
	add(sum.ProcessedByTwoOwners == 0, "%d %s processed by two owners at once", sum.ProcessedByTwoOwners, plural(sum.ProcessedByTwoOwners, "message"))
	add(res.Lost() == 0, "%d %s lost (never finalized)", res.Lost(), plural(res.Lost(), "message"))
	add(sum.OwnershipViolations == 0, "%d ownership %s", sum.OwnershipViolations, plural(sum.OwnershipViolations, "violation"))
	add(res.StuckProcessing == 0, "%d %s left Processing past their lease", res.StuckProcessing, plural(res.StuckProcessing, "row"))
	return nil
}
