// Package stress is leaselab's stress harness: real goroutine workers on separate connections
// with random crashes, pauses and clock jumps (Run), the checks that every message was
// finalized exactly once, and their table (WriteResults). Its real time comes through an
// injected engine.Wall. It imports engine; engine does not import it.
package stress

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"leaselab/engine"
	"leaselab/engine/words"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// Config is one stress run: real goroutine workers on separate connections with random
// crashes, pauses and clock jumps.
type Config struct {
	Workers   int
	Messages  int
	CrashRate float64 // per action and worker: crash, then restart a moment later
	PauseRate float64 // per action and worker: pause for a moment (it keeps what it holds)
	JumpRate  float64 // per action and worker: move the scenario clock by up to one lease
	Seed      int64
	FailRate  float64 // per provider call: it fails (a timeout), and the attempt is retried
	// Skew is each worker's clock offset, by index (--skew B=+400ms is Skew[1]); shorter than
	// Workers, the others keep the scenario's clock.
	Skew     []time.Duration
	Settings engine.Settings
	// Rescuer runs a sweeper beside the workers, on a goroutine and a connection of its own:
	// every RescueEvery of real time (0: DefaultRescueEvery) it reads the expired leases and
	// moves each back to Pending, its UPDATE guarded or not as Settings.GuardedRescue says.
	Rescuer     bool
	RescueEvery time.Duration
	// Timeout is the real-time limit of the run, seeding included; 0: DefaultTimeout. A
	// run cut by it is a result (TimedOut, its unfinished messages counted as such), not an
	// error.
	Timeout time.Duration
	// Wall is the real time the run measures and its workers pause on; nil: engine.SystemWall.
	Wall engine.Wall
	// Slots, when positive, makes each worker a hosted worker of that many slots
	// (engine.Session.Host): batch claims, batch finalizes, heartbeats, on the real clock.
	// The fault rates do not apply to them; each is stopped cleanly once every message is done.
	Slots int
}

// Result is what a stress run did and what its checks found.
type Result struct {
	Seed       int64
	Summary    *engine.Summary
	Crashes    int
	Pauses     int
	ClockJumps int
	// Finalized counts committed finalizes per message; exactly one each is the guarantee.
	FinalizedTwice int
	// NeverFinalized counts messages with no committed finalize, except, in a run cut by its
	// timeout, those still unfinished in the database (Unfinished): those were not lost, the
	// run ended before their turn.
	NeverFinalized int
	// TimedOut: the run reached Config.Timeout (perhaps while seeding) before every
	// message was Processed.
	TimedOut bool
	// Unfinished counts, in a timed-out run, the messages not Processed when it stopped
	// (Pending, Processing, or not yet created by the seeding).
	Unfinished      int
	StuckProcessing int // rows left Processing with an expired lease
	DeadLettered    int // messages parked after their last allowed attempt: counted apart, not lost
	// Rescuer is what the rescuer did (Config.Rescuer), nil without one: its sweeps, the
	// expired leases they read, its rescues, the guarded ones refused (0 rows), and the
	// rescues that set a finished message back to Pending (River #1302).
	Rescuer *engine.RescuerSummary
	// Hosted is what the hosted workers did (Config.Slots), added up; nil without them: their
	// fetches and the messages those claimed, the completer's batches, heartbeats, releases.
	Hosted   *engine.HostStats
	Elapsed  time.Duration
	Problems []string
}

// OK reports whether every stress check held.
func (r *Result) OK() bool { return len(r.Problems) == 0 }

// Lost is the number of messages lost: never finalized although the run gave them time. In a
// run that ran to its end that is every message without a finalize or not Processed; in a run
// cut by its timeout, unfinished messages are counted in Unfinished, not here.
func (r *Result) Lost() int {
	if r.TimedOut || r.Summary == nil {
		return r.NeverFinalized
	}
	return max(r.NeverFinalized, r.Summary.Lost)
}

// Run seeds db and runs cfg until every message is Processed (or the timeout), then checks:
// every message finalized exactly once, none lost, no ownership violation, no row left
// Processing past its lease. progress, when set, is called with the processed count now and
// then. The seed fixes each worker's chaos schedule; the interleaving of real goroutines is the
// operating system's, so a failing seed reproduces the conditions, not the exact schedule.
//
// When ctx ends (an interrupt), Run returns an error that wraps context.Cause(ctx): the run
// did not finish and has no result. When the run's own Timeout ends it, seeding included, the
// result says so (TimedOut, Unfinished) and fails its checks.
func Run(ctx context.Context, db engine.DB, cfg Config, progress func(done, total int)) (*Result, error) {
	cfg = cfg.withDefaults()
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout(cfg.Messages)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := cfg.Wall.Now()
	s, err := engine.NewSession(ctx, cfg.scenario(), db)
	switch {
	case err != nil && parent.Err() != nil:
		return nil, fmt.Errorf("stress: %w", context.Cause(parent))
	case err != nil && ctx.Err() != nil:
		return seedTimedOut(parent, db, cfg, cfg.Wall.Now().Sub(start)), nil
	case err != nil:
		return nil, err
	}
	defer s.Close()
	r := &run{ctx: ctx, parent: parent, cancel: cancel, s: s, db: db, cfg: cfg, start: start,
		progress: progress, res: &Result{Seed: cfg.Seed}}
	hostCtx, stopHosts := context.WithCancel(ctx) // the hosted workers' (Slots): ended when the run is done
	defer stopHosts()
	r.startWorkers(hostCtx)
	stopRescuer := r.startRescuer()
	defer stopRescuer()
	if err := r.drive(stopRescuer); err != nil {
		return nil, err
	}
	stopHosts()
	r.wg.Wait()
	stopRescuer()
	return r.finish()
}

// withDefaults is cfg with the rescuer's pace and the wall clock it left unset.
func (cfg Config) withDefaults() Config {
	if cfg.Rescuer && cfg.RescueEvery <= 0 {
		cfg.RescueEvery = DefaultRescueEvery
	}
	if cfg.Wall == nil {
		cfg.Wall = engine.SystemWall{}
	}
	return cfg
}

// scenario is the scenario a stress run plays: cfg's workers, messages, settings, failures,
// skews and rescuer.
func (cfg Config) scenario() *engine.Scenario {
	sc := &engine.Scenario{Name: "stress", Title: "stress", Source: "stress", Messages: cfg.Messages,
		Settings: cfg.Settings, Pass: "EVERY STRESS CHECK HELD ✅", Failure: "A STRESS CHECK FAILED ❌", Seed: cfg.Seed,
		FailRate: cfg.FailRate}
	sc.SetWorkers(cfg.Workers)
	if cfg.Rescuer {
		sc.Rescuer = &engine.RescuerSpec{Short: "R", Every: cfg.RescueEvery}
	}
	for i, d := range cfg.Skew[:min(len(cfg.Skew), len(sc.Workers))] {
		sc.Workers[i].Skew = d
	}
	return sc
}

// run is one stress run under way: the session, the goroutines of its workers and rescuer,
// and what they counted.
type run struct {
	ctx, parent context.Context // the run's (its timeout) and the caller's
	cancel      context.CancelFunc
	s           *engine.Session
	db          engine.DB
	cfg         Config
	start       time.Time
	progress    func(done, total int)
	res         *Result

	done                   atomic.Bool
	crashes, pauses, jumps atomic.Int64
	wg                     sync.WaitGroup
	errMu                  sync.Mutex
	runErr                 error
	hostMu                 sync.Mutex
}

// fail records a goroutine's error and ends the run.
func (r *run) fail(err error) {
	r.errMu.Lock()
	r.runErr = err
	r.errMu.Unlock()
	r.cancel()
}

// startWorkers starts a goroutine a worker: a chaos worker, or a hosted one (Slots) on hostCtx.
func (r *run) startWorkers(hostCtx context.Context) {
	cfg := r.cfg
	if cfg.Slots > 0 {
		r.res.Hosted = &engine.HostStats{}
	}
	for i := range r.s.Workers() {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(i)+1))
			var err error
			if cfg.Slots > 0 {
				var hs engine.HostStats
				hs, err = r.s.Host(hostCtx, i, engine.HostOptions{Slots: cfg.Slots, Wall: cfg.Wall, Poll: time.Millisecond})
				r.hostMu.Lock()
				r.res.Hosted.Add(hs)
				r.hostMu.Unlock()
			} else {
				err = chaosWorker(r.ctx, r.s, i, rng, cfg, &r.done, &r.crashes, &r.pauses, &r.jumps)
			}
			if err != nil {
				r.fail(err)
			}
		}()
	}
}

// startRescuer starts the rescuer, on its own goroutine and connection, until the driver stops
// it (the function it returns, which may be called again) or the run ends.
func (r *run) startRescuer() (stop func()) {
	if !r.cfg.Rescuer {
		return func() {}
	}
	ch := make(chan struct{})
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		if err := sweeper(r.ctx, r.s, r.cfg.Wall, r.cfg.RescueEvery, ch); err != nil {
			r.fail(err)
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(ch); rwg.Wait() }) }
}

// drive is the driver: report progress, and when every live worker is idle behind a live lease
// (its owner crashed or paused) or a backoff, move the clock just past what ends first, as
// time would (jumpToNextEnd). Progress is the ledger's count of messages written; the
// database's counts, a read of every row, are read to confirm the end, and now and then in
// case the database has rows of its own.
func (r *run) drive(stopRescuer func()) error {
	wall, rescuing := r.cfg.Wall, r.cfg.Rescuer
	var countsAt time.Time
	countsEvery := time.Second
	for !r.done.Load() {
		finished := r.s.Ledger().FinishedCount()
		r.report(min(finished, r.cfg.Messages))
		if finished >= r.cfg.Messages || wall.Now().Sub(countsAt) >= countsEvery {
			t0 := wall.Now()
			c, err := r.db.Counts(r.ctx)
			if err != nil && r.ctx.Err() != nil && r.parent.Err() == nil {
				// The run's timeout (or a worker's error) ended the read: the run is cut, not
				// broken, and what it did is counted below.
				break
			}
			if err != nil {
				r.cancel()
				r.wg.Wait()
				if r.runErr != nil {
					return r.runErr
				}
				return fmt.Errorf("stress: %w (after %s)", err, wall.Now().Sub(r.start).Round(time.Millisecond))
			}
			countsAt, countsEvery = wall.Now(), max(time.Second, 20*wall.Now().Sub(t0))
			if c.OutboxProcessed+c.OutboxDeadLettered == c.Messages && rescuing {
				// Every message is finished, but a sweep may be between its read and its write:
				// stop the rescuer, then read again (an unguarded rescue may have set a finished
				// message back to Pending, for the workers to take again).
				stopRescuer()
				rescuing, countsAt = false, time.Time{}
				continue
			}
			if c.OutboxProcessed+c.OutboxDeadLettered == c.Messages { // a dead letter is finished, apart
				r.report(c.OutboxProcessed + c.OutboxDeadLettered)
				r.done.Store(true)
				break
			}
		}
		if len(r.s.Crew().Runnable()) == 0 && jumpToNextEnd(r.ctx, r.s) {
			r.jumps.Add(1)
		}
		select {
		case <-r.ctx.Done():
			r.done.Store(true)
		case <-wall.After(2 * time.Millisecond):
		}
	}
	return nil
}

// report tells progress, if set, that done of the run's messages are finished.
func (r *run) report(done int) {
	if r.progress != nil {
		r.progress(done, r.cfg.Messages)
	}
}

// finish is the run's result once its goroutines have stopped: what they counted, the
// session's summary and the checks.
func (r *run) finish() (*Result, error) {
	ctx, res := r.ctx, r.res
	res.Elapsed = r.cfg.Wall.Now().Sub(r.start)
	if r.parent.Err() != nil {
		return nil, fmt.Errorf("stress: %w", context.Cause(r.parent))
	}
	if r.runErr != nil {
		return nil, r.runErr
	}
	// Every row is Processed, but a worker may still hold a stale lease (paused, or slow): let
	// each finish what it holds, so that a stale write, if the guards allow one, is counted.
	if err := drain(context.WithoutCancel(ctx), r.s); err != nil {
		return nil, err
	}
	res.Crashes, res.Pauses, res.ClockJumps = int(r.crashes.Load()), int(r.pauses.Load()), int(r.jumps.Load())
	var err error
	if res.Summary, err = r.s.Summarize(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	res.Rescuer = res.Summary.Rescuer
	return res, checks(context.WithoutCancel(ctx), r.s, res, ctx.Err() != nil)
}

// jumpToNextEnd moves the clock, when no worker can act, to the earliest moment one will:
// the end of the lease or of the backoff its last claim was blocked by (the due claim reports
// whichever ends first), or its provider's answer (Crew.NextTimer), at least a millisecond
// on; failing that, just past the earliest live lease in the database (a worker that has not
// polled since it began). It reports whether the clock moved.
func jumpToNextEnd(ctx context.Context, s *engine.Session) bool {
	if t := s.Crew().NextTimer(); !t.IsZero() {
		// A timer already due belongs to a poll that raced the last move of the clock: the
		// worker waits for the world to change, so move the clock on a millisecond.
		if soon := s.Clock().Now().Add(time.Millisecond); t.Before(soon) {
			t = soon
		}
		_, err := s.Crew().SetClock(t)
		return err == nil
	}
	_, err := s.Crew().ClockPastLease(ctx)
	return err == nil
}

// DefaultRescueEvery is the rescuer's real time between sweeps when Config.RescueEvery is 0.
const DefaultRescueEvery = 5 * time.Millisecond

// sweeper is the rescuer's goroutine: a sweep every `every` of real time until stop is closed
// or ctx ends. An error of a sweep ends it, unless the run is ending.
func sweeper(ctx context.Context, s *engine.Session, wall engine.Wall, every time.Duration, stop <-chan struct{}) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-stop:
			return nil
		case <-wall.After(every):
		}
		if err := s.Rescuer().Sweep(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// DefaultTimeout is a stress run's real-time limit when none is given: 5 minutes, or 2 ms
// per message for more than 150,000 (a 1,000,000-message run took 13 minutes on a shared 2-core
// machine, about 0.8 ms per message, seeding included; the limit leaves more than twice that).
func DefaultTimeout(messages int) time.Duration {
	return max(5*time.Minute, time.Duration(messages)*2*time.Millisecond)
}

// seedTimedOut is the result of a run whose timeout ended it while it was still seeding: no
// worker ran, and every message is unfinished, none lost.
func seedTimedOut(parent context.Context, db engine.DB, cfg Config, elapsed time.Duration) *Result {
	created := 0
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), 5*time.Second)
	defer cancel()
	if c, err := db.Counts(ctx); err == nil {
		created = c.Messages
	}
	res := &Result{Seed: cfg.Seed, TimedOut: true, Unfinished: cfg.Messages, Elapsed: elapsed,
		Summary: &engine.Summary{Messages: cfg.Messages, ProcessedByWorker: map[string]int{}}}
	res.Problems = append(res.Problems, fmt.Sprintf("timed out after %s while seeding (%d of %d messages created): %d messages unfinished (timeout)",
		elapsed.Round(time.Millisecond), created, cfg.Messages, cfg.Messages))
	return res
}

// chaosWorker runs worker i until done, and after each action maybe crashes it (restarting it
// a moment later), pauses it, or jumps the clock.
func chaosWorker(ctx context.Context, s *engine.Session, i int, rng *rand.Rand, cfg Config, done *atomic.Bool, crashes, pauses, jumps *atomic.Int64) error {
	w := s.Workers()[i]
	for !done.Load() && ctx.Err() == nil {
		if !w.Runnable() {
			sleep(ctx, cfg.Wall, 200*time.Microsecond)
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
			if _, err := s.Crew().Crash(i); err == nil {
				crashes.Add(1)
			}
			sleep(ctx, cfg.Wall, time.Duration(rng.IntN(2000))*time.Microsecond)
			if _, err := s.Crew().Restart(ctx, i); err != nil && ctx.Err() == nil {
				return err
			}
		case r < cfg.CrashRate+cfg.PauseRate:
			if _, err := s.Crew().SetPaused(i, true); err == nil {
				pauses.Add(1)
			}
			sleep(ctx, cfg.Wall, time.Duration(rng.IntN(3000))*time.Microsecond)
			s.Crew().SetPaused(i, false)
		case r < cfg.CrashRate+cfg.PauseRate+cfg.JumpRate:
			s.Crew().AdvanceClock(time.Duration(1+rng.Int64N(s.Settings().Lease.Milliseconds())) * time.Millisecond)
			jumps.Add(1)
		}
	}
	return nil
}

// drain wakes every worker and steps each until it holds nothing: no message in progress and
// no loaded rows.
func drain(ctx context.Context, s *engine.Session) error {
	for i, w := range s.Workers() {
		v := w.View()
		if v.Paused {
			if _, err := s.Crew().SetPaused(i, false); err != nil {
				return err
			}
		}
		for n := 0; n < 1_000_000; n++ {
			v = w.View()
			if v.Crashed || (v.Holding == "" && v.Queue == 0) {
				break
			}
			if w.Next() == engine.ActNone { // waiting on a provider answer: it is due now or later
				if t := w.Timer(); !t.IsZero() {
					s.Crew().SetClock(t)
				}
			}
			if _, _, err := w.Step(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

func checks(ctx context.Context, s *engine.Session, res *Result, timedOut bool) error {
	sum := res.Summary
	// Written twice, and two owners at once, are the Summary's own counts (one definition for
	// stress and every report); only the messages never written are stress's own.
	res.FinalizedTwice = sum.FinalizedMoreThanOnce
	unfinished := map[string]bool{} // rows not Processed when a timed-out run stopped
	now := s.Clock().Now()
	err := s.DB().EachRow(ctx, func(r engine.Row) error {
		if r.Status == engine.StatusProcessing && r.LockedUntil.Before(now) && !timedOut {
			res.StuckProcessing++ // a run cut short leaves leases behind: that is not a fault
		}
		if timedOut && r.Status != engine.StatusProcessed || r.Status == engine.StatusDeadLettered {
			unfinished[r.IdempotencyKey] = true // a dead letter was parked, never finalized: not lost
		}
		if r.Status == engine.StatusDeadLettered {
			res.DeadLettered++
		}
		return nil
	})
	if err != nil {
		return err
	}
	res.NeverFinalized = s.Crew().NeverFinalized(func(key string) bool { return unfinished[key] })
	res.TimedOut = timedOut
	if timedOut {
		res.Unfinished = sum.Messages - sum.Outbox.Processed - res.DeadLettered
	}
	add := func(ok bool, format string, args ...any) {
		if !ok {
			res.Problems = append(res.Problems, fmt.Sprintf(format, args...))
		}
	}
	add(!timedOut, "timed out after %s with %d of %d processed: %d %s unfinished (timeout)",
		res.Elapsed.Round(time.Millisecond), sum.Outbox.Processed, sum.Messages, res.Unfinished, words.Plural(res.Unfinished, "message"))
	add(res.FinalizedTwice == 0, "%d %s finalized more than once", res.FinalizedTwice, words.Plural(res.FinalizedTwice, "message"))
	add(sum.ProcessedByTwoOwners == 0, "%d %s processed by two owners at once", sum.ProcessedByTwoOwners, words.Plural(sum.ProcessedByTwoOwners, "message"))
	add(res.Lost() == 0, "%d %s lost (never finalized)", res.Lost(), words.Plural(res.Lost(), "message"))
	add(sum.OwnershipViolations == 0, "%d ownership %s", sum.OwnershipViolations, words.Plural(sum.OwnershipViolations, "violation"))
	if r := res.Rescuer; r != nil {
		add(r.RescuedFinished == 0, "%d %s set a finished message back to Pending (an unguarded rescue raced a finalize)",
			r.RescuedFinished, words.Plural(r.RescuedFinished, "rescue"))
	}
	add(res.StuckProcessing == 0, "%d %s left Processing past their lease", res.StuckProcessing, words.Plural(res.StuckProcessing, "row"))
	return nil
}

// WriteResults prints one row per stress run and a total.
func WriteResults(out io.Writer, st engine.Settings, results []*Result) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "stress: %s\n\n", st.Describe())
	fmt.Fprintln(tw, "seed\tmessages\tprocessed\tattempts\tre-processed\ttwo owners\tfinalized 2+\tlost\tunfinished\tviolations\trejected\tcrashes\tpauses\tclock jumps\tstuck\tmsgs/s\tleast share\tresult\t")
	var t Result
	t.Summary = &engine.Summary{}
	least := 100.0
	for _, r := range results {
		s := r.Summary
		least = min(least, leastShare(s))
		rate := float64(s.Outbox.Processed) / r.Elapsed.Seconds()
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f\t%.1f %%\t%s\t\n", r.Seed, s.Messages, s.Outbox.Processed,
			s.ProcessingAttempts, s.ReprocessedAfterLostLease, s.ProcessedByTwoOwners, r.FinalizedTwice, r.Lost(), r.Unfinished, s.OwnershipViolations,
			s.RejectedFinalizes, r.Crashes, r.Pauses, r.ClockJumps, r.StuckProcessing, rate, leastShare(s), words.PassFail(r.OK()))
		t.Summary.Messages += s.Messages
		t.Summary.Outbox.Processed += s.Outbox.Processed
		t.Summary.ProcessingAttempts += s.ProcessingAttempts
		t.Summary.ReprocessedAfterLostLease += s.ReprocessedAfterLostLease
		t.Summary.ProcessedByTwoOwners += s.ProcessedByTwoOwners
		t.FinalizedTwice += r.FinalizedTwice
		t.NeverFinalized += r.Lost()
		t.Unfinished += r.Unfinished
		t.Summary.OwnershipViolations += s.OwnershipViolations
		t.Summary.RejectedFinalizes += s.RejectedFinalizes
		t.Crashes, t.Pauses, t.ClockJumps, t.StuckProcessing = t.Crashes+r.Crashes, t.Pauses+r.Pauses, t.ClockJumps+r.ClockJumps, t.StuckProcessing+r.StuckProcessing
		t.Elapsed += r.Elapsed
		if !r.OK() {
			t.Problems = append(t.Problems, r.Problems...)
		}
	}
	if len(results) > 1 {
		s := t.Summary
		fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f\t%.1f %%\t%s\t\n", s.Messages, s.Outbox.Processed,
			s.ProcessingAttempts, s.ReprocessedAfterLostLease, s.ProcessedByTwoOwners, t.FinalizedTwice, t.NeverFinalized, t.Unfinished, s.OwnershipViolations,
			s.RejectedFinalizes, t.Crashes, t.Pauses, t.ClockJumps, t.StuckProcessing, float64(s.Outbox.Processed)/t.Elapsed.Seconds(), least, words.PassFail(t.OK()))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	waits, waited := 0, int64(0)
	parked, failures := 0, 0
	for _, r := range results {
		waits, waited = waits+r.Summary.LockWaits, waited+r.Summary.LockWaitedMS
		parked, failures = parked+r.DeadLettered, failures+r.Summary.ProviderFailures
	}
	if failures > 0 || parked > 0 {
		fmt.Fprintf(out, "\nfailures: %d provider %s failed; %d %s dead-lettered (parked after max-attempts: finished apart, not lost)\n",
			failures, words.Plural(failures, "call"), parked, words.Plural(parked, "message"))
	}
	if r := rescuerTotal(results); r != nil {
		fmt.Fprintf(out, "\nrescuer: %d %s (every %s, guarded rescue %s), %d expired %s read; %d %s (1 row), %d refused (0 rows: the row had moved on); %d undid a finish (a finished message set back to Pending)\n",
			r.Sweeps, words.Plural(r.Sweeps, "sweep"), r.Every, engine.OnOff(st.GuardedRescue), r.Seen, words.Plural(r.Seen, "lease"),
			r.Rescued, words.Plural(r.Rescued, "rescue"), r.Refused, r.RescuedFinished)
	}
	if h := hostedTotal(results); h != nil {
		fmt.Fprintf(out, "\nhosted: %d %s claimed %d %s (%.1f a fetch; %d found none); %d completer %s finalized %d (largest %d), %d rejected; %d %s renewed, %d lost; %d released; %d busy %s\n",
			h.Fetches, words.Plural(h.Fetches, "fetch"), h.Claimed, words.Plural(h.Claimed, "message"), perFetch(h), h.EmptyFetches,
			h.Batches, words.Plural(h.Batches, "batch"), h.Finalized, h.MaxBatch, h.Rejected, h.Renewed, words.Plural(h.Renewed, "lease"),
			h.LostLeases, h.Released, h.BusyRetries, words.Plural(h.BusyRetries, "retry"))
	}
	if waits > 0 {
		fmt.Fprintf(out, "\nlock waits: %d %s waited for another transaction's row lock, %d ms in all (skip-locked is off)\n",
			waits, words.Plural(waits, "claim"), waited)
	}
	_, err := fmt.Fprintln(out, "\nre-processed: messages processed again after their owner lost the lease (a crash or pause after the provider\n"+
		"call: at-least-once, which no lease prevents); two owners: messages processed by two owners at once (no lease,\n"+
		"or a lease taken over a live one), which leasing prevents;\n"+
		"finalized 2+: messages whose outcome was written more than once, which leasing with fencing must prevent;\n"+
		"unfinished: messages a run cut by its --timeout had not finished (not lost: their rows are intact);\n"+
		"least share: the least busy worker's share of the processing (the total row: the least of the runs); fair is 100/workers.")
	return err
}

// JSONRun is one stress run in WriteJSON's output: the table's figures, and the rescuer's.
type JSONRun struct {
	Seed                      int64                  `json:"seed"`
	Messages                  int                    `json:"messages"`
	Processed                 int                    `json:"processed"`
	DeadLettered              int                    `json:"dead_lettered"`
	Lost                      int                    `json:"lost"`
	Unfinished                int                    `json:"unfinished"`
	FinalizedTwice            int                    `json:"finalized_twice"`
	ProcessedByTwoOwners      int                    `json:"processed_by_two_owners"`
	ReprocessedAfterLostLease int                    `json:"reprocessed_after_lost_lease"`
	OwnershipViolations       int                    `json:"ownership_violations"`
	RejectedFinalizes         int                    `json:"rejected_finalizes"`
	ProviderFailures          int                    `json:"provider_failures"`
	Crashes                   int                    `json:"crashes"`
	Pauses                    int                    `json:"pauses"`
	ClockJumps                int                    `json:"clock_jumps"`
	Stuck                     int                    `json:"stuck"`
	ElapsedMS                 int64                  `json:"elapsed_ms"`
	Rescuer                   *engine.RescuerSummary `json:"rescuer,omitempty"`
	Hosted                    *engine.HostStats      `json:"hosted,omitempty"`
	OK                        bool                   `json:"ok"`
	Problems                  []string               `json:"problems"`
}

// hostedTotal adds up the hosted workers' counts of results; nil when no run had them.
func hostedTotal(results []*Result) *engine.HostStats {
	return totalOf(results, func(r *Result) *engine.HostStats { return r.Hosted },
		func(*engine.HostStats) *engine.HostStats { return &engine.HostStats{} },
		func(t, r *engine.HostStats) { t.Add(*r) })
}

// totalOf adds up one part of results (of: nil where a run has none) with add, starting from
// zero(the first part found); nil when no run has it.
func totalOf[T any](results []*Result, of func(*Result) *T, zero func(first *T) *T, add func(t, r *T)) *T {
	var t *T
	for _, r := range results {
		p := of(r)
		if p == nil {
			continue
		}
		if t == nil {
			t = zero(p)
		}
		add(t, p)
	}
	return t
}

// perFetch is how many messages a fetch that took any claimed, on average.
func perFetch(h *engine.HostStats) float64 {
	if h.Fetches == 0 {
		return 0
	}
	return float64(h.Claimed) / float64(h.Fetches)
}

// JSONRuns is WriteJSON's output: the settings in words, every run, and whether all held.
type JSONRuns struct {
	Settings string    `json:"settings"`
	Runs     []JSONRun `json:"runs"`
	OK       bool      `json:"ok"`
}

// WriteJSON prints the runs as one JSON object (JSONRuns), for scripts: what WriteResults's
// table and lines say, the rescuer's sweeps, rescues, refused rescues and undone finishes with
// them.
func WriteJSON(out io.Writer, st engine.Settings, results []*Result) error {
	all := JSONRuns{Settings: st.Describe(), Runs: []JSONRun{}, OK: true}
	for _, r := range results {
		s := r.Summary
		all.Runs = append(all.Runs, JSONRun{Seed: r.Seed, Messages: s.Messages, Processed: s.Outbox.Processed,
			DeadLettered: r.DeadLettered, Lost: r.Lost(), Unfinished: r.Unfinished, FinalizedTwice: r.FinalizedTwice,
			ProcessedByTwoOwners: s.ProcessedByTwoOwners, ReprocessedAfterLostLease: s.ReprocessedAfterLostLease,
			OwnershipViolations: s.OwnershipViolations, RejectedFinalizes: s.RejectedFinalizes, ProviderFailures: s.ProviderFailures,
			Crashes: r.Crashes, Pauses: r.Pauses, ClockJumps: r.ClockJumps, Stuck: r.StuckProcessing,
			ElapsedMS: r.Elapsed.Milliseconds(), Rescuer: r.Rescuer, Hosted: r.Hosted, OK: r.OK(), Problems: append([]string{}, r.Problems...)})
		all.OK = all.OK && r.OK()
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(all)
}

// rescuerTotal adds up the rescuers' counts of results; nil when no run had a rescuer.
func rescuerTotal(results []*Result) *engine.RescuerSummary {
	return totalOf(results, func(r *Result) *engine.RescuerSummary { return r.Rescuer },
		func(f *engine.RescuerSummary) *engine.RescuerSummary {
			return &engine.RescuerSummary{Name: f.Name, Every: f.Every}
		},
		func(t, r *engine.RescuerSummary) {
			t.Sweeps += r.Sweeps
			t.Seen += r.Seen
			t.Rescued += r.Rescued
			t.Refused += r.Refused
			t.RescuedFinished += r.RescuedFinished
		})
}

// leastShare is the least busy worker's share of the processing attempts, in per cent (a fair
// share is 100 / workers).
func leastShare(s *engine.Summary) float64 {
	total, least := 0, -1
	for _, n := range s.ProcessedByWorker {
		total += n
		if least < 0 || n < least {
			least = n
		}
	}
	if total == 0 {
		return 0
	}
	return 100 * float64(least) / float64(total)
}

// sleep waits on wall for d, or until ctx ends.
func sleep(ctx context.Context, wall engine.Wall, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-wall.After(d):
	}
}
