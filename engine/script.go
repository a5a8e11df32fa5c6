package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// maxRunActions bounds one run step, so that a script that cannot finish fails instead of
// spinning.
const maxRunActions = 10_000_000

// maxRunClock bounds how far a run until-done may move the scenario clock: a lease shorter than
// the work livelocks (every attempt outlives its lease and is reclaimed), and must fail, not spin.
// The bound is 10 minutes, or 100 leases or provider answers when those are longer.
func (s *Session) maxRunClock() time.Duration {
	st := s.Settings()
	d := max(st.Lease, st.ProviderLatency)
	for _, w := range s.workers {
		d = max(d, w.spec.Latency)
	}
	return max(10*time.Minute, 100*d)
}

// ScriptError is a script step that could not be carried out, at its line.
type ScriptError struct {
	File string
	Line int
	Err  error
}

func (e *ScriptError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *ScriptError) Unwrap() error { return e.Err }

// Next performs the next visible thing: one action of the script, or, with no script at all,
// one action in round-robin over the live workers. A run the watchdog stops (ErrNoProgress) is
// no error here: the script ends there, as RunToEnd's does, and the summary says it did not
// finish (Summary.WatchdogEnded, DidNotFinish). A concurrent step runs whole, free on
// goroutines, as RunToEnd runs it. Once a script is done, Next does nothing more: the script's
// end is the end, where RunToEnd stops. It returns false when nothing could happen. A script
// step that is impossible now (the user crashed the worker it names, say) is skipped with a
// note in the timeline.
func (s *Session) Next(ctx context.Context) (bool, error) {
	for !s.ScriptDone() {
		st, pc := &s.Scenario.Steps[s.pc], s.pc
		s.stepStarts()
		if st.Kind == StepConcurrent {
			if err := s.runConcurrent(ctx, s.pick(st.Workers)); errors.Is(err, ErrNoProgress) {
				s.endStalled(err)
				return true, s.stepEnded(ctx, pc)
			} else if err != nil {
				return false, &ScriptError{File: s.Scenario.Source, Line: st.Line, Err: err}
			}
			s.pc, s.inStep, s.stepN = s.pc+1, false, 0
			return true, s.stepEnded(ctx, pc)
		}
		acted, done, err := s.advance(ctx, st, false)
		if errors.Is(err, ErrNotNow) {
			// The refusal in its own words: the sentinel's "action not possible now" says nothing more.
			s.Note(fmt.Sprintf("script line %d skipped: %s", st.Line, strings.TrimSuffix(err.Error(), ": "+ErrNotNow.Error())))
			acted, done, err = true, true, nil
		}
		if errors.Is(err, ErrNoProgress) {
			s.endStalled(err) // the run ends here, as RunToEnd's does: its summary says why
			return false, s.stepEnded(ctx, pc)
		}
		if err != nil {
			return false, &ScriptError{File: s.Scenario.Source, Line: st.Line, Err: err}
		}
		if done {
			s.pc, s.inStep, s.stepN = s.pc+1, false, 0
			if err := s.stepEnded(ctx, pc); err != nil {
				return false, err
			}
		}
		if acted {
			return true, nil
		}
	}
	if len(s.Scenario.Steps) > 0 {
		return false, nil
	}
	return s.roundRobin(ctx, s.workers)
}

// RunToEnd runs the whole script headless: run steps by the scheduler, concurrent steps on
// goroutines. Any step that cannot be carried out is an error naming its line.
func (s *Session) RunToEnd(ctx context.Context) error {
	steps := s.Scenario.Steps
	if len(steps) == 0 {
		steps = []Step{{Kind: StepRun, UntilDone: true}}
		s.Scenario.Steps = steps
	}
	for !s.ScriptDone() {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, pc := &s.Scenario.Steps[s.pc], s.pc
		s.stepStarts()
		var err error
		if st.Kind == StepConcurrent {
			err = s.runConcurrent(ctx, s.pick(st.Workers))
		} else {
			for done := false; !done && err == nil; {
				_, done, err = s.advance(ctx, st, true)
			}
		}
		if err != nil {
			if errors.Is(err, ErrNoProgress) {
				s.endStalled(err) // the summary says why; the command still has the error
				if err := s.stepEnded(ctx, pc); err != nil {
					return err
				}
			}
			return &ScriptError{File: s.Scenario.Source, Line: st.Line, Err: err}
		}
		s.pc, s.inStep, s.stepN = s.pc+1, false, 0
		if err := s.stepEnded(ctx, pc); err != nil {
			return err
		}
	}
	return nil
}

// pick returns the named workers, or all of them.
func (s *Session) pick(names []string) []*Worker {
	if len(names) == 0 {
		return s.workers
	}
	var out []*Worker
	for _, n := range names {
		if w, err := s.Worker(n); err == nil {
			out = append(out, w)
		}
	}
	return out
}

func (s *Session) index(w *Worker) int {
	for i, x := range s.workers {
		if x == w {
			return i
		}
	}
	return -1
}

// advance carries out one action of script step st. acted: something happened; done: the step
// is finished.
func (s *Session) advance(ctx context.Context, st *Step, headless bool) (acted, done bool, err error) {
	var w *Worker
	if st.Worker != "" {
		if w, err = s.Worker(st.Worker); err != nil {
			return false, true, err
		}
	}
	if !s.inStep {
		s.inStep = true
		if st.Kind == StepRun || st.Kind == StepConcurrent {
			s.rr = 0
		}
	}
	switch st.Kind {
	case StepPhase:
		s.phase(st.Text)
	case StepNote:
		s.Note(st.Text)
	case StepClock:
		err = s.clockStep(ctx, st)
	case StepSet:
		switch st.Name {
		case "lease", "heartbeat-every", "provider-latency":
			_, err = s.SetDuration(st.Name, st.Value)
		default:
			_, err = s.SetToggle(st.Name, st.On)
		}
	case StepCrash:
		_, err = s.Crash(s.index(w))
	case StepRestart:
		_, err = s.Restart(ctx, s.index(w))
	case StepPause, StepResume:
		_, err = s.SetPaused(s.index(w), st.Kind == StepPause)
	case StepWorker:
		return s.workerStep(ctx, st, w)
	case StepWorkerRun:
		return s.workerRunStep(ctx, w)
	case StepRun, StepConcurrent:
		return s.runOnce(ctx, st)
	case StepScan, StepRescue:
		return s.rescuerStep(ctx, st)
	}
	return err == nil, true, err
}

// clockStep carries out a script's clock step: past the lease, forward by a delta, or to a time.
func (s *Session) clockStep(ctx context.Context, st *Step) (err error) {
	switch {
	case st.PastLease:
		if _, err = s.ClockPastLease(ctx); errors.Is(err, ErrNoLiveLease) {
			// Nothing to expire (leasing is off, say): the clock stays, and the timeline says so.
			s.Note(fmt.Sprintf("clock past-lease: no live lease at %s; the clock stays", FormatClock(s.clock.Now())))
			err = nil
		}
	case st.Delta > 0:
		s.AdvanceClock(st.Delta)
	default:
		_, err = s.SetClock(st.At)
	}
	return err
}

// workerStep carries out one action of a script's worker step (`A claim`, `A step 3`).
func (s *Session) workerStep(ctx context.Context, st *Step, w *Worker) (acted, done bool, err error) {
	act := st.Action
	if s.stepN > 0 && act == ActClaim && w.Next() == ActTake {
		// With the atomic claim off, a scripted claim is its two halves: select, then take.
		ev, ok, e := w.Do(ctx, ActTake, "")
		s.actions++
		return ok || ev.Outcome == outcomeBusy, ok, e
	}
	ev, ok, e := w.Do(ctx, act, st.Key)
	s.actions++
	if e != nil {
		return false, true, e
	}
	if !ok && ev.Outcome == outcomeBusy {
		return false, false, nil // retry
	}
	if !ok {
		return false, true, fmt.Errorf("%s has nothing to do: %w", w.Name, ErrNotNow)
	}
	s.stepN++
	if act == ActClaim && ev.Kind == EvSelect && ev.Outcome == OutcomeSelected {
		return true, false, nil // the take follows
	}
	return true, s.stepN >= st.Count, nil
}

// workerRunStep carries out one action of a script's `A run`: the worker acts until it cannot.
func (s *Session) workerRunStep(ctx context.Context, w *Worker) (acted, done bool, err error) {
	if !w.Runnable() {
		return false, true, nil
	}
	ev, ok, e := w.Step(ctx)
	s.actions++
	s.stepN++
	if s.stepN > maxRunActions {
		return false, true, fmt.Errorf("%s run: no end after %d actions: %w", w.Name, maxRunActions, ErrNoProgress)
	}
	if e == nil {
		e = s.watchdog()
	}
	return ok || ev.Outcome == outcomeBusy, false, e
}

// runOnce carries out one action of a run step: the next worker in round-robin (or a seeded
// random one) acts; with crash and pause rates it may then crash or pause. When nobody can act,
// workers the run crashed or paused come back, then (until-done) the clock moves to the next
// timer; otherwise the step is done.
//
// Until-done, a round in which every action found nothing claimable (all work under live
// leases) moves the clock instead of bringing workers back: those would only find the same, and
// a crash drawn after their attempt would start the round again. Without it a run with a high
// crash rate went round like that until the watchdog stopped it, with the clock never moving
// and the crashed workers' leases never ending (5,000 messages, crash-rate=0.25).
func (s *Session) runOnce(ctx context.Context, st *Step) (acted, done bool, err error) {
	ws := s.pick(st.Workers)
	s.stepN++
	if s.stepN == 1 {
		s.runFrom, s.runMoved = s.clock.Now(), true
	}
	if s.stepN > maxRunActions {
		return false, true, fmt.Errorf("run: no end after %d actions: %w", maxRunActions, ErrNoProgress)
	}
	if moved := s.clock.Now().Sub(s.runFrom); moved > s.maxRunClock() {
		return false, true, fmt.Errorf("%w: run until-done still not done after %s of scenario time, the most it may move the clock (%s): %s",
			ErrNoProgress, moved, s.inAll(), s.stallCause())
	}
	if err := s.watchdog(); err != nil {
		return false, true, err
	}
	if swept, err := s.rescuerDue(ctx); swept || err != nil {
		return swept, false, err
	}
	s.wakeDue(ctx, false)
	ready := runnable(ws)
	if len(ready) == 0 {
		stalled := !s.runMoved
		s.runMoved = false
		if !(st.UntilDone && stalled) && s.wakeDue(ctx, true) {
			return true, false, nil
		}
		if st.UntilDone {
			if t := s.withRescuer(nextTimer(ws)); !t.IsZero() {
				if _, err := s.SetClock(t); err != nil {
					return false, true, err
				}
				return true, false, nil
			}
			if stalled && s.settled(ctx) {
				// Every message is finished: the workers the run crashed or paused come back
				// (as at the end of any run) and the step is done. Brought back to act, they
				// would only find nothing, and the crashes and pauses drawn after that went
				// round until the watchdog ended a finished run (300 of 300 finalized, 64
				// workers, crash-rate=0.03 pause-rate=0.03).
				s.wakeDue(ctx, true)
				return false, true, nil
			}
			if stalled && s.wakeDue(ctx, true) {
				return true, false, nil
			}
		}
		return false, true, nil
	}
	var w *Worker
	if st.Random {
		w = ready[s.rng.IntN(len(ready))]
	} else {
		w = s.nextRoundRobin(ws, ready)
	}
	ev, ok, err := w.Step(ctx)
	s.actions++
	if err != nil || !ok {
		return ev.Outcome == outcomeBusy, false, err
	}
	if ev.Outcome != OutcomeBlocked && ev.Outcome != OutcomeEmpty {
		s.runMoved = true
	}
	switch r := s.rng.Float64(); {
	case r < st.CrashRate:
		if st.CrashAt != ActNone && ev.Kind != EventKind(st.CrashAt.String()) {
			break // a crash drawn after another action: nothing happens
		}
		_, err = s.Crash(s.index(w))
		s.pauses[w] = 1 + s.rng.IntN(len(ws)*4)
	case r < st.CrashRate+st.PauseRate:
		_, err = s.SetPaused(s.index(w), true)
		s.runPauses++
		s.pauses[w] = 1 + s.rng.IntN(len(ws)*4)
	}
	return true, false, err
}

// settled reports whether the database holds no message left to do: none Pending, none
// Processing (all finalized or parked). An error reads as not settled: the run goes on and its
// next action meets the error. The ledger is asked first: while fewer messages have been
// finalized or parked than were seeded, the database is not read (Counts reads every row, and a
// run with many crashes comes here often).
func (s *Session) settled(ctx context.Context) bool {
	if s.ledger.FinishedCount()+s.env.retry.counts().DeadLettered < s.Scenario.Messages {
		return false
	}
	c, err := s.db.Counts(ctx)
	return err == nil && c.OutboxPending == 0 && c.OutboxProcessing == 0
}

// nextRoundRobin returns the first ready worker after the round-robin cursor.
func (s *Session) nextRoundRobin(ws, ready []*Worker) *Worker {
	isReady := map[*Worker]bool{}
	for _, w := range ready {
		isReady[w] = true
	}
	for i := 0; i < len(ws); i++ {
		w := ws[(s.rr+i)%len(ws)]
		if isReady[w] {
			s.rr = (s.rr + i + 1) % len(ws)
			return w
		}
	}
	return ready[0]
}

// wakeDue counts down the run's own crashes and pauses and brings back the workers whose time
// has come (all of them when force is set). It reports whether it brought any back.
func (s *Session) wakeDue(ctx context.Context, force bool) bool {
	woke := false
	for _, w := range s.workers {
		left, ok := s.pauses[w]
		if !ok {
			continue
		}
		if left--; left > 0 && !force {
			s.pauses[w] = left
			continue
		}
		delete(s.pauses, w)
		v := w.View()
		switch {
		case v.Crashed:
			s.Restart(ctx, s.index(w))
		case v.Paused:
			s.SetPaused(s.index(w), false)
		}
		woke = true
	}
	return woke
}

// roundRobin performs one action of the next runnable worker among ws.
func (s *Session) roundRobin(ctx context.Context, ws []*Worker) (bool, error) {
	for tries := 0; tries < 100; tries++ {
		ready := runnable(ws)
		if len(ready) == 0 {
			return false, nil
		}
		w := s.nextRoundRobin(ws, ready)
		ev, ok, err := w.Step(ctx)
		s.actions++
		if err != nil || ok {
			return ok, err
		}
		if ev.Outcome != outcomeBusy {
			return false, nil
		}
	}
	return false, nil
}
