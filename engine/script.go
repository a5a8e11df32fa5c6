package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Script is a session's scripted runner: where the script stands (the step at pc, how far into
// it), the round-robin cursor, the seeded random source and the run's own crashes and pauses.
// It carries out the script through the crew, sweeps with the rescuer when its time comes, asks
// the watchdog after every action whether the run still makes progress, and tells the observer
// when a step with a question starts and ends. Like the session, it is driven by one goroutine.
type Script struct {
	sc      *Scenario // the script; the session's own copy once a free run or a redrive changed it
	crew    *Crew
	rescuer *Rescuer // nil when the scenario has none
	watch   *watchdog
	asked   *observer
	free    freeOptions // how concurrent steps run

	pc      int       // next script step
	inStep  bool      // the step at pc has started (multi-action steps)
	stepN   int       // actions done by the step at pc
	rr      int       // round-robin cursor
	runFrom time.Time // scenario time when the current run step started
	// runMoved: since the current run step last found nobody ready, some action did more than
	// find nothing claimable (runOnce).
	runMoved bool
	rng      *rand.Rand
	pauses   map[*Worker]int // worker -> actions left before a random pause ends
	// freeRan: the workers have run free (Session.StartFree): the script is over, and the
	// session is one with no script from then on (Session.Done, Next).
	freeRan bool
}

// Done reports whether every step of the script has run.
func (r *Script) Done() bool { return r.pc >= len(r.sc.Steps) }

// Position returns the line of the next script step (0 when the script is done), its index and
// the number of steps.
func (r *Script) Position() (line, index, total int) {
	if r.pc < len(r.sc.Steps) {
		line = r.sc.Steps[r.pc].Line
	}
	return line, r.pc, len(r.sc.Steps)
}

// FinishSteps gives a scenario with no script its one "run until-done" step, so that Next runs
// it to the end (CmdFinish).
func (r *Script) FinishSteps() {
	if len(r.sc.Steps) == 0 {
		r.sc.Steps = []Step{{Kind: StepRun, UntilDone: true}}
	}
}

// NextQuestion is the question of the next script step, when it has one and has not started.
func (r *Script) NextQuestion() *Question {
	if r.inStep || r.Done() {
		return nil
	}
	return r.sc.Steps[r.pc].Ask
}

// Observed is what the run showed for the question of script step pc, once it has started;
// false for a step without a question, or one that has not started.
func (r *Script) Observed(pc int) (Observed, bool) { return r.asked.get(pc) }

// here is where the session stands, for History.
func (r *Script) here() mark {
	return mark{events: r.crew.ledger.EventCount(), pc: r.pc, stepN: r.stepN, actions: r.crew.actions, inStep: r.inStep}
}

// goFree replaces what is left of the script by one "run until-done" step (on a copy of the
// scenario, which it returns), the first time the workers run free.
func (r *Script) goFree() *Scenario {
	if !r.freeRan {
		sc := *r.sc
		sc.Steps = []Step{{Kind: StepRun, UntilDone: true}}
		r.sc = &sc
		r.pc, r.inStep, r.stepN, r.freeRan = 0, false, 0, true
	}
	return r.sc
}

// extend adds a "run until-done" step to a script that is over (on a copy of the scenario,
// which it returns), so that the workers do what a redrive left them; false when the script is
// not over or there is none.
func (r *Script) extend() (*Scenario, bool) {
	if !r.Done() || len(r.sc.Steps) == 0 {
		return r.sc, false
	}
	sc := *r.sc
	sc.Steps = append(slices.Clip(sc.Steps), Step{Line: sc.Steps[len(sc.Steps)-1].Line, Kind: StepRun, UntilDone: true})
	r.sc = &sc
	return r.sc, true
}

// endStalled ends the script where the watchdog stopped it, and keeps why.
func (r *Script) endStalled(err error) {
	r.pc, r.inStep, r.stepN = len(r.sc.Steps), false, 0
	r.watch.end(err)
}

// starts tells the observer that the step at pc starts, when it has not already.
func (r *Script) starts() {
	if r.Done() || r.inStep {
		return
	}
	r.asked.starts(r.pc, &r.sc.Steps[r.pc])
}

// ended tells the observer that script step pc is over (and, when the script is, that the run
// is).
func (r *Script) ended(ctx context.Context, pc int) error {
	if err := r.asked.ended(ctx, pc, r.sc.Steps[pc].Ask); err != nil {
		return err
	}
	if !r.Done() {
		return nil
	}
	return r.asked.atEnd(ctx, nil)
}

// maxRunActions bounds one run step, so that a script that cannot finish fails instead of
// spinning.
const maxRunActions = 10_000_000

// maxRunClock bounds how far a run until-done may move the scenario clock: a lease shorter than
// the work livelocks (every attempt outlives its lease and is reclaimed), and must fail, not spin.
// The bound is 10 minutes, or 100 leases or provider answers when those are longer.
func (r *Script) maxRunClock() time.Duration {
	st := r.crew.settings.get()
	d := max(st.Lease, st.ProviderLatency)
	for _, w := range r.crew.workers {
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
func (r *Script) Next(ctx context.Context) (bool, error) {
	for !r.Done() {
		st, pc := &r.sc.Steps[r.pc], r.pc
		r.starts()
		if st.Kind == StepConcurrent {
			if err := r.runConcurrent(ctx, r.crew.pick(st.Workers)); errors.Is(err, ErrNoProgress) {
				r.endStalled(err)
				return true, r.ended(ctx, pc)
			} else if err != nil {
				return false, &ScriptError{File: r.sc.Source, Line: st.Line, Err: err}
			}
			r.pc, r.inStep, r.stepN = r.pc+1, false, 0
			return true, r.ended(ctx, pc)
		}
		acted, done, err := r.advance(ctx, st, false)
		if errors.Is(err, ErrNotNow) {
			// The refusal in its own words: the sentinel's "action not possible now" says nothing more.
			r.crew.Note(fmt.Sprintf("script line %d skipped: %s", st.Line, strings.TrimSuffix(err.Error(), ": "+ErrNotNow.Error())))
			acted, done, err = true, true, nil
		}
		if errors.Is(err, ErrNoProgress) {
			r.endStalled(err) // the run ends here, as RunToEnd's does: its summary says why
			return false, r.ended(ctx, pc)
		}
		if err != nil {
			return false, &ScriptError{File: r.sc.Source, Line: st.Line, Err: err}
		}
		if done {
			r.pc, r.inStep, r.stepN = r.pc+1, false, 0
			if err := r.ended(ctx, pc); err != nil {
				return false, err
			}
		}
		if acted {
			return true, nil
		}
	}
	if len(r.sc.Steps) > 0 {
		return false, nil
	}
	return r.roundRobin(ctx, r.crew.workers)
}

// RunToEnd runs the whole script headless: run steps by the scheduler, concurrent steps on
// goroutines. Any step that cannot be carried out is an error naming its line.
func (r *Script) RunToEnd(ctx context.Context) error {
	steps := r.sc.Steps
	if len(steps) == 0 {
		steps = []Step{{Kind: StepRun, UntilDone: true}}
		r.sc.Steps = steps
	}
	for !r.Done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, pc := &r.sc.Steps[r.pc], r.pc
		r.starts()
		var err error
		if st.Kind == StepConcurrent {
			err = r.runConcurrent(ctx, r.crew.pick(st.Workers))
		} else {
			for done := false; !done && err == nil; {
				_, done, err = r.advance(ctx, st, true)
			}
		}
		if err != nil {
			if errors.Is(err, ErrNoProgress) {
				r.endStalled(err) // the summary says why; the command still has the error
				if err := r.ended(ctx, pc); err != nil {
					return err
				}
			}
			return &ScriptError{File: r.sc.Source, Line: st.Line, Err: err}
		}
		r.pc, r.inStep, r.stepN = r.pc+1, false, 0
		if err := r.ended(ctx, pc); err != nil {
			return err
		}
	}
	return nil
}

// advance carries out one action of script step st. acted: something happened; done: the step
// is finished.
func (r *Script) advance(ctx context.Context, st *Step, headless bool) (acted, done bool, err error) {
	var w *Worker
	if st.Worker != "" {
		if w, err = r.crew.Worker(st.Worker); err != nil {
			return false, true, err
		}
	}
	if !r.inStep {
		r.inStep = true
		if st.Kind == StepRun || st.Kind == StepConcurrent {
			r.rr = 0
		}
	}
	switch st.Kind {
	case StepPhase:
		r.crew.phase(st.Text)
	case StepNote:
		r.crew.Note(st.Text)
	case StepClock:
		err = r.clockStep(ctx, st)
	case StepSet:
		switch st.Name {
		case "lease", "heartbeat-every", "provider-latency":
			_, err = r.crew.SetDuration(st.Name, st.Value)
		default:
			_, err = r.crew.SetToggle(st.Name, st.On)
		}
	case StepCrash:
		_, err = r.crew.Crash(r.crew.index(w))
	case StepRestart:
		_, err = r.crew.Restart(ctx, r.crew.index(w))
	case StepPause, StepResume:
		_, err = r.crew.SetPaused(r.crew.index(w), st.Kind == StepPause)
	case StepWorker:
		return r.workerStep(ctx, st, w)
	case StepWorkerRun:
		return r.workerRunStep(ctx, w)
	case StepRun, StepConcurrent:
		return r.runOnce(ctx, st)
	case StepScan, StepRescue:
		return r.rescuer.step(ctx, st)
	}
	return err == nil, true, err
}

// clockStep carries out a script's clock step: past the lease, forward by a delta, or to a time.
func (r *Script) clockStep(ctx context.Context, st *Step) (err error) {
	switch {
	case st.PastLease:
		if _, err = r.crew.ClockPastLease(ctx); errors.Is(err, ErrNoLiveLease) {
			// Nothing to expire (leasing is off, say): the clock stays, and the timeline says so.
			r.crew.Note(fmt.Sprintf("clock past-lease: no live lease at %s; the clock stays", FormatClock(r.crew.clock.Now())))
			err = nil
		}
	case st.Delta > 0:
		r.crew.AdvanceClock(st.Delta)
	default:
		_, err = r.crew.SetClock(st.At)
	}
	return err
}

// workerStep carries out one action of a script's worker step (`A claim`, `A step 3`).
func (r *Script) workerStep(ctx context.Context, st *Step, w *Worker) (acted, done bool, err error) {
	act := st.Action
	if r.stepN > 0 && act == ActClaim && w.Next() == ActTake {
		// With the atomic claim off, a scripted claim is its two halves: select, then take.
		ev, ok, e := w.Do(ctx, ActTake, "")
		r.crew.actions++
		return ok || ev.Outcome == outcomeBusy, ok, e
	}
	ev, ok, e := w.Do(ctx, act, st.Key)
	r.crew.actions++
	if e != nil {
		return false, true, e
	}
	if !ok && ev.Outcome == outcomeBusy {
		return false, false, nil // retry
	}
	if !ok {
		return false, true, fmt.Errorf("%s has nothing to do: %w", w.Name, ErrNotNow)
	}
	r.stepN++
	if act == ActClaim && ev.Kind == EvSelect && ev.Outcome == OutcomeSelected {
		return true, false, nil // the take follows
	}
	return true, r.stepN >= st.Count, nil
}

// workerRunStep carries out one action of a script's `A run`: the worker acts until it cannot.
func (r *Script) workerRunStep(ctx context.Context, w *Worker) (acted, done bool, err error) {
	if !w.Runnable() {
		return false, true, nil
	}
	ev, ok, e := w.Step(ctx)
	r.crew.actions++
	r.stepN++
	if r.stepN > maxRunActions {
		return false, true, fmt.Errorf("%s run: no end after %d actions: %w", w.Name, maxRunActions, ErrNoProgress)
	}
	if e == nil {
		e = r.watch.check()
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
func (r *Script) runOnce(ctx context.Context, st *Step) (acted, done bool, err error) {
	ws := r.crew.pick(st.Workers)
	r.stepN++
	if r.stepN == 1 {
		r.runFrom, r.runMoved = r.crew.clock.Now(), true
	}
	if r.stepN > maxRunActions {
		return false, true, fmt.Errorf("run: no end after %d actions: %w", maxRunActions, ErrNoProgress)
	}
	if moved := r.crew.clock.Now().Sub(r.runFrom); moved > r.maxRunClock() {
		return false, true, fmt.Errorf("%w: run until-done still not done after %s of scenario time, the most it may move the clock (%s): %s",
			ErrNoProgress, moved, r.watch.inAll(), r.watch.stallCause())
	}
	if err := r.watch.check(); err != nil {
		return false, true, err
	}
	if swept, err := r.rescuer.due(ctx); swept || err != nil {
		return swept, false, err
	}
	r.wakeDue(ctx, false)
	ready := runnable(ws)
	if len(ready) == 0 {
		stalled := !r.runMoved
		r.runMoved = false
		if !(st.UntilDone && stalled) && r.wakeDue(ctx, true) {
			return true, false, nil
		}
		if st.UntilDone {
			if t := r.rescuer.nextSweep(nextTimer(ws)); !t.IsZero() {
				if _, err := r.crew.SetClock(t); err != nil {
					return false, true, err
				}
				return true, false, nil
			}
			if stalled && r.settled(ctx) {
				// Every message is finished: the workers the run crashed or paused come back
				// (as at the end of any run) and the step is done. Brought back to act, they
				// would only find nothing, and the crashes and pauses drawn after that went
				// round until the watchdog ended a finished run (300 of 300 finalized, 64
				// workers, crash-rate=0.03 pause-rate=0.03).
				r.wakeDue(ctx, true)
				return false, true, nil
			}
			if stalled && r.wakeDue(ctx, true) {
				return true, false, nil
			}
		}
		return false, true, nil
	}
	var w *Worker
	if st.Random {
		w = ready[r.rng.IntN(len(ready))]
	} else {
		w = r.nextRoundRobin(ws, ready)
	}
	ev, ok, err := w.Step(ctx)
	r.crew.actions++
	if err != nil || !ok {
		return ev.Outcome == outcomeBusy, false, err
	}
	if ev.Outcome != OutcomeBlocked && ev.Outcome != OutcomeEmpty {
		r.runMoved = true
	}
	switch draw := r.rng.Float64(); {
	case draw < st.CrashRate:
		if st.CrashAt != ActNone && ev.Kind != EventKind(st.CrashAt.String()) {
			break // a crash drawn after another action: nothing happens
		}
		_, err = r.crew.Crash(r.crew.index(w))
		r.pauses[w] = 1 + r.rng.IntN(len(ws)*4)
	case draw < st.CrashRate+st.PauseRate:
		_, err = r.crew.SetPaused(r.crew.index(w), true)
		r.watch.runPauses++
		r.pauses[w] = 1 + r.rng.IntN(len(ws)*4)
	}
	return true, false, err
}

// settled reports whether the database holds no message left to do: none Pending, none
// Processing (all finalized or parked). An error reads as not settled: the run goes on and its
// next action meets the error. The ledger is asked first: while fewer messages have been
// finalized or parked than were seeded, the database is not read (Counts reads every row, and a
// run with many crashes comes here often).
func (r *Script) settled(ctx context.Context) bool {
	if r.crew.ledger.FinishedCount()+r.crew.env.retry.counts().DeadLettered < r.sc.Messages {
		return false
	}
	c, err := r.crew.db.Counts(ctx)
	return err == nil && c.OutboxPending == 0 && c.OutboxProcessing == 0
}

// nextRoundRobin returns the first ready worker after the round-robin cursor.
func (r *Script) nextRoundRobin(ws, ready []*Worker) *Worker {
	isReady := map[*Worker]bool{}
	for _, w := range ready {
		isReady[w] = true
	}
	for i := 0; i < len(ws); i++ {
		w := ws[(r.rr+i)%len(ws)]
		if isReady[w] {
			r.rr = (r.rr + i + 1) % len(ws)
			return w
		}
	}
	return ready[0]
}

// wakeDue counts down the run's own crashes and pauses and brings back the workers whose time
// has come (all of them when force is set). It reports whether it brought any back.
func (r *Script) wakeDue(ctx context.Context, force bool) bool {
	woke := false
	for _, w := range r.crew.workers {
		left, ok := r.pauses[w]
		if !ok {
			continue
		}
		if left--; left > 0 && !force {
			r.pauses[w] = left
			continue
		}
		delete(r.pauses, w)
		v := w.View()
		switch {
		case v.Crashed:
			r.crew.Restart(ctx, r.crew.index(w))
		case v.Paused:
			r.crew.SetPaused(r.crew.index(w), false)
		}
		woke = true
	}
	return woke
}

// roundRobin performs one action of the next runnable worker among ws.
func (r *Script) roundRobin(ctx context.Context, ws []*Worker) (bool, error) {
	for tries := 0; tries < 100; tries++ {
		ready := runnable(ws)
		if len(ready) == 0 {
			return false, nil
		}
		w := r.nextRoundRobin(ws, ready)
		ev, ok, err := w.Step(ctx)
		r.crew.actions++
		if err != nil || ok {
			return ok, err
		}
		if ev.Outcome != outcomeBusy {
			return false, nil
		}
	}
	return false, nil
}
