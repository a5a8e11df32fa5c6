package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"leaselab/engine"
)

// clockStep is how far + moves the scenario clock.
const clockStep = 100 * time.Millisecond

// opKind is one kind of engine work a key can ask for.
type opKind int

// Engine operations. Each runs in a tea.Cmd, one at a time.
const (
	opNext       opKind = iota // the next visible action (script, then round-robin)
	opStepWorker               // the selected worker's next action
	opCrash                    // crash the selected worker
	opRestart                  // restart the selected worker
	opPause                    // pause or wake the selected worker
	opToggle                   // flip a protocol toggle
	opClock                    // clock +100 ms
	opPastLease                // clock just past the earliest live lease
	opOpen                     // open (or reopen) a scenario on a fresh database
	opFreeStart                // start every worker on its own goroutine (g)
	opFreeStop                 // stop the free-running workers at a step boundary (g again)
	opFreePace                 // restart the free-running workers at another pace (< >)
	opPoll                     // read the database while the workers free-run
	opFinish                   // one chunk of running the script to its end at full speed (e)
	opGoto                     // bring the database to another position of the history (b [ ])
)

// op is one piece of engine work, with what it needs captured when the key was pressed.
type op struct {
	kind   opKind
	worker int           // worker ops: the worker selected when the key was pressed
	toggle string        // opToggle: engine.ToggleLeasing, …
	name   string        // opOpen: the scenario name or file
	auto   bool          // issued by auto-play
	pace   time.Duration // opFreeStart, opFreePace: each worker's pause after an action
	poll   int           // opPoll, opFinish: the poll loop or the run to the end that asked
	target int           // opGoto: the position in the history
	// answered marks an opNext that the open question was answered for: it runs the step.
	answered bool
	answer   int // with answered: the index of the answer chosen
}

// isStep reports whether o performs a worker action.
func (o op) isStep() bool { return o.kind == opNext || o.kind == opStepWorker }

// level is how a status note is shown.
type level int

// Status levels.
const (
	levelInfo level = iota
	levelWarn
	levelError
)

// resultMsg carries what an engine command did and the frame it read afterwards. gen is the
// generation of the session it ran on: a result for an older session is dropped.
type resultMsg struct {
	gen   int
	op    op
	frame *frame
	acted bool // a step performed an action
	note  string
	level level
	// freeFailed is how many free-running workers have stopped on an error (polls only).
	freeFailed int
	// held says how the room slows the free runs down now ("" when it does not; polls only).
	held   string
	finish finishResult // opFinish: what the chunk did
	hist   histResult   // what the history did (history.go)
}

// openedMsg carries a freshly opened session and its first frame.
type openedMsg struct {
	gen   int
	name  string
	sess  *engine.Session
	frame *frame
	err   error
}

// apply performs o on s and says what happened, in words. It does I/O.
func apply(ctx context.Context, s *engine.Session, o op, k KeyMap) (note string, lvl level, acted bool) {
	defer func() { note = engine.Escape(note) }() // events and errors may quote database values
	before := s.Ledger().EventCount()
	var (
		err error
		own engine.Event // the event the operation itself wrote (not a step's)
	)
	switch o.kind {
	case opNext:
		acted, err = s.Next(ctx)
	case opStepWorker:
		var ev engine.Event
		ev, acted, err = s.StepWorker(ctx, o.worker)
		if err == nil && !acted {
			if ev.Outcome == engine.OutcomeBusy {
				return "the database stayed busy; nothing happened: try again", levelWarn, false
			}
			return workerIdle(s, o.worker, k), levelWarn, false
		}
	case opCrash:
		own, err = s.Crash(o.worker)
	case opRestart:
		own, err = s.Restart(ctx, o.worker)
	case opPause:
		ws := s.Workers()
		paused := o.worker >= 0 && o.worker < len(ws) && ws[o.worker].View().Paused
		own, err = s.SetPaused(o.worker, !paused)
	case opToggle:
		var on bool
		if on, err = s.Settings().Get(o.toggle); err == nil {
			fresh := s.Ledger().Total() == (engine.WorkerLedger{})
			if _, err = s.SetToggle(o.toggle, !on); err == nil {
				return toggleNote(o.toggle, !on, s.Settings(), fresh), levelInfo, false
			}
		}
	case opClock:
		own = s.AdvanceClock(clockStep)
	case opPastLease:
		own, err = s.ClockPastLease(ctx)
	}
	switch {
	case errors.Is(err, engine.ErrNoWorker):
		return fmt.Sprintf("no worker %d: this scenario has %d", o.worker+1, len(s.Workers())), levelWarn, false
	case errors.Is(err, engine.ErrNoLiveLease):
		return fmt.Sprintf("no live lease at %s: %s moves the clock just past the earliest LockedUntilUtc of a Processing row",
			engine.FormatClock(s.Clock().Now()), keyName(k.PastLease)), levelWarn, false
	case errors.Is(err, engine.ErrNotNow):
		return err.Error(), levelWarn, acted
	case err != nil:
		return "error: " + err.Error(), levelError, acted
	}
	if own.Seq > 0 {
		// Free-running workers write events meanwhile: the note is this operation's own.
		return own.String(), levelInfo, acted
	}
	evs := s.Ledger().EventsSince(before)
	switch {
	case len(evs) == 1:
		note = evs[0].String()
	case len(evs) > 1:
		note = fmt.Sprintf("%s (and %d more above)", evs[len(evs)-1], len(evs)-1)
	}
	if _, at, total := s.ScriptPosition(); o.kind == opStepWorker && acted && at < total {
		// The script goes on from where it was: the lesson's expectations assume it alone acts.
		note += " — a step outside the script: the lesson's expectations may no longer hold"
	}
	return note, levelInfo, acted
}

// workerIdle explains why worker i did nothing.
func workerIdle(s *engine.Session, i int, k KeyMap) string {
	v := s.Workers()[i].View()
	now := engine.FormatClock(s.Clock().Now())
	switch {
	case v.Crashed:
		return v.Name + " is CRASHED: press " + keyName(k.Restart) + " to restart it"
	case v.Paused:
		return v.Name + " is PAUSED: press " + keyName(k.Pause) + " to wake it"
	}
	return fmt.Sprintf("%s has nothing to do at %s (%s)", v.Name, now, v.State)
}

// whyNothing explains, from the frame read after a step that did nothing, why nothing could
// happen and what to press.
func whyNothing(f *frame, k KeyMap) string {
	now := engine.FormatClock(f.Now)
	live := 0
	for _, w := range f.Workers {
		if !w.Crashed && !w.Paused {
			live++
		}
	}
	switch {
	case f.Done:
		verdict := "FAIL"
		if f.Summary != nil && f.Summary.Passed {
			verdict = "PASS"
		}
		return fmt.Sprintf("the scenario is done (%s): %s starts it again, %s opens the next one",
			verdict, keyName(k.Reset), keyName(k.NextScenario))
	case live == 0:
		return fmt.Sprintf("nothing can act at %s: every worker is crashed or paused (%s restarts, %s wakes the selected one)",
			now, keyName(k.Restart), keyName(k.Pause))
	case !f.earliestLease().IsZero():
		return fmt.Sprintf("nothing to do at %s: the live leases block every claim — press %s to move the clock past the earliest (%s)",
			now, keyName(k.PastLease), engine.FormatClock(f.earliestLease()))
	case !f.NextTimer.IsZero():
		return fmt.Sprintf("nothing to do at %s: the next thing happens at %s — press %s to move the clock",
			now, engine.FormatClock(f.NextTimer), keyName(k.Clock))
	}
	return fmt.Sprintf("nothing to do at %s", now)
}
