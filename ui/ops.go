package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
	"leaselab/ui/common"
	"leaselab/ui/workers"
)

// clockStep is how far + moves the scenario clock.
const clockStep = 100 * time.Millisecond

// opKind is one kind of work the lab runs in a tea.Cmd, one at a time: an engine command, or
// the lab's own work around the engine (opening a scenario, the free run, running to the end,
// the history's positions).
type opKind int

// The lab's work. Everything a key asks of a session is an opCommand carrying an
// engine.Command; the others are the lab's own.
const (
	opCommand   opKind = iota // op.cmd, done by engine.Session.Do and recorded by engine.History
	opOpen                    // open (or reopen) a scenario on a fresh database
	opFreeStart               // start every worker on its own goroutine (g)
	opFreeStop                // stop the free-running workers at a step boundary (g again)
	opFreePace                // restart the free-running workers at another pace (< >)
	opPoll                    // read the database while the workers free-run
	opFinish                  // one chunk of running the script to its end at full speed (e)
	opGoto                    // bring the database to another position of the history (b [ ])
	opReplay                  // make a share code's moves, each recorded in the history (share.go)
)

// op is one piece of work, with what it needs captured when the key was pressed.
type op struct {
	kind   opKind
	cmd    engine.Command // opCommand: what to do, with the worker selected at the press
	name   string         // opOpen: the scenario name or file
	auto   bool           // issued by auto-play
	pace   time.Duration  // opFreeStart, opFreePace: each worker's pause after an action
	poll   int            // opPoll, opFinish: the poll loop or the run to the end that asked
	target int            // opGoto: the position in the history
	// answered marks a Next that the open question was answered for: it runs the step.
	answered bool
	answer   int // with answered: the index of the answer chosen
	// moves are opReplay's: the share code's moves to make.
	moves []engine.Command
}

// isStep reports whether o performs a worker action: the keys space and s (Command.Info).
func (o op) isStep() bool { return o.cmd != nil && o.cmd.Info().Step }

// resultMsg carries what an engine command did and the frame it read afterwards. gen is the
// generation of the session it ran on: a result for an older session is dropped.
type resultMsg struct {
	gen   int
	op    op
	frame *common.Frame
	acted bool // a step performed an action
	note  string
	level common.Level
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
	frame *common.Frame
	err   error
}

// apply does c on s and says what happened, in words. It does I/O.
func apply(ctx context.Context, s *engine.Session, c engine.Command, k KeyMap) (note string, lvl common.Level, acted bool) {
	defer func() { note = words.Escape(note) }() // events and errors may quote database values
	before := s.Ledger().EventCount()
	fresh := s.Ledger().Total() == (engine.WorkerLedger{})
	r, err := s.Do(ctx, c)
	acted = r.Acted
	info := c.Info()
	stepped := info.Step && info.Worker >= 0 // s: the selected worker's step
	switch {
	case errors.Is(err, engine.ErrNoWorker):
		return fmt.Sprintf("no worker %d: this scenario has %d", info.Worker+1, len(s.Workers())), common.LevelWarn, false
	case errors.Is(err, engine.ErrNoLiveLease):
		return fmt.Sprintf("no live lease at %s: %s moves the clock just past the earliest LockedUntilUtc of a Processing row",
			engine.FormatClock(s.Clock().Now()), common.KeyName(k.PastLease)), common.LevelWarn, false
	case errors.Is(err, engine.ErrNotNow):
		return common.Refusal(err), common.LevelWarn, acted
	case err != nil:
		return "error: " + err.Error(), common.LevelError, acted
	case r.Busy:
		return "the database stayed busy; nothing happened: try again", common.LevelWarn, false
	case stepped && !acted:
		return workerIdle(s, info.Worker, k), common.LevelWarn, false
	}
	if info.Toggle != "" {
		on, _ := s.Settings().Get(info.Toggle)
		return toggleNote(info.Toggle, on, s.Settings(), fresh), common.LevelInfo, false
	}
	if r.Event.Seq > 0 {
		// Free-running workers write events meanwhile: the note is this command's own.
		return r.Event.String(), common.LevelInfo, acted
	}
	evs := s.Ledger().EventsSince(before)
	switch {
	case len(evs) == 1:
		note = evs[0].String()
	case len(evs) > 1:
		note = fmt.Sprintf("%s (and %d more above)", evs[len(evs)-1], len(evs)-1)
	}
	if _, at, total := s.Script().Position(); stepped && acted && at < total {
		// The script goes on from where it was: the lesson's expectations assume it alone acts.
		note += " — a step outside the script: the lesson's expectations may no longer hold"
	}
	return note, common.LevelInfo, acted
}

// workerIdle explains why worker i did nothing.
func workerIdle(s *engine.Session, i int, k KeyMap) string {
	v := s.Workers()[i].View()
	now := engine.FormatClock(s.Clock().Now())
	switch {
	case v.Crashed:
		return v.Name + " is CRASHED: press " + common.KeyName(workers.DefaultKeys().Restart) + " to restart it"
	case v.Paused:
		return v.Name + " is PAUSED: press " + common.KeyName(workers.DefaultKeys().Pause) + " to wake it"
	}
	return fmt.Sprintf("%s has nothing to do at %s (%s)", v.Name, now, v.State)
}

// whyNothing explains, from the frame read after a step that did nothing, why nothing could
// happen and what to press.
func whyNothing(f *common.Frame, k KeyMap) string {
	wk := workers.DefaultKeys() // the worker keys' names, which never change
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
			verdict, common.KeyName(k.Reset), common.KeyName(k.NextScenario))
	case live == 0:
		return fmt.Sprintf("nothing can act at %s: every worker is crashed or paused (%s restarts, %s wakes the selected one)",
			now, common.KeyName(wk.Restart), common.KeyName(wk.Pause))
	case !f.EarliestLease().IsZero():
		return fmt.Sprintf("nothing to do at %s: the live leases block every claim — press %s to move the clock past the earliest (%s)",
			now, common.KeyName(k.PastLease), engine.FormatClock(f.EarliestLease()))
	case !f.NextTimer.IsZero():
		return fmt.Sprintf("nothing to do at %s: the next thing happens at %s — press %s to move the clock",
			now, engine.FormatClock(f.NextTimer), common.KeyName(k.Clock))
	}
	return fmt.Sprintf("nothing to do at %s", now)
}
