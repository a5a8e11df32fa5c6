package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Command is one thing a person can do to a session, as a value: what the lab's keys ask for.
// Session.Do carries it out, and History records the same value and replays it by handing it to
// Do again, so a command is made, done and redone in one shape. The set is closed (run is
// unexported); every command is comparable, so that a recorded one can be told from a new one.
type Command interface {
	run(ctx context.Context, s *Session) (Result, error)
	// Info is what the command is, for its caller: whether it is a step, which worker and
	// which toggle it is aimed at. A caller reads it instead of switching on the type.
	Info() CommandInfo
}

// CommandInfo is what a command says of itself (Command.Info).
type CommandInfo struct {
	// Step: one worker's action, the lab's space and s (CmdNext, CmdStepWorker).
	Step bool
	// Worker is the index of the worker it is aimed at (CmdStepWorker, CmdCrash, CmdRestart,
	// CmdPause); -1 when it is aimed at none.
	Worker int
	// Toggle is the toggle it flips (CmdToggle); "" for the others.
	Toggle string
}

// noWorker is the CommandInfo of a command that is no step and is aimed at no worker.
var noWorker = CommandInfo{Worker: -1}

func (CmdNext) Info() CommandInfo         { return CommandInfo{Step: true, Worker: -1} }
func (c CmdStepWorker) Info() CommandInfo { return CommandInfo{Step: true, Worker: c.Worker} }
func (c CmdCrash) Info() CommandInfo      { return CommandInfo{Worker: c.Worker} }
func (c CmdRestart) Info() CommandInfo    { return CommandInfo{Worker: c.Worker} }
func (c CmdPause) Info() CommandInfo      { return CommandInfo{Worker: c.Worker} }
func (c CmdToggle) Info() CommandInfo     { return CommandInfo{Worker: -1, Toggle: c.Name} }
func (CmdClock) Info() CommandInfo        { return noWorker }
func (CmdPastLease) Info() CommandInfo    { return noWorker }
func (CmdFinish) Info() CommandInfo       { return noWorker }
func (CmdFree) Info() CommandInfo         { return noWorker }
func (CmdRedrive) Info() CommandInfo      { return noWorker }

// Result is what a command did.
type Result struct {
	// Acted reports a step (CmdNext, CmdStepWorker, CmdFinish) that performed an action.
	Acted bool
	// Busy reports a CmdStepWorker that did nothing because the database stayed busy.
	Busy bool
	// Event is the event the command itself wrote (a crash, a restart, a pause, a toggle, a
	// clock move); the zero Event for a step, whose events are the workers'.
	Event Event
}

// CmdNext is Script.Next: the script's next action, or one in round-robin.
type CmdNext struct{}

// CmdStepWorker is Crew.Step: worker Worker's next action.
type CmdStepWorker struct{ Worker int }

// CmdCrash is Crew.Crash: worker Worker loses its memory and its connection.
type CmdCrash struct{ Worker int }

// CmdRestart is Crew.Restart: crashed worker Worker gets a new connection.
type CmdRestart struct{ Worker int }

// CmdPause pauses worker Worker, or wakes it when it is paused.
type CmdPause struct{ Worker int }

// CmdToggle flips the toggle Name (ToggleLeasing, …): on when it is off, off when it is on.
type CmdToggle struct{ Name string }

// CmdClock is Crew.AdvanceClock: the scenario clock moves forward by Delta.
type CmdClock struct{ Delta time.Duration }

// CmdPastLease is Crew.ClockPastLease: the clock moves 1 ms past the earliest live lease.
type CmdPastLease struct{}

// CmdFinish is one action of a run to the end of a scenario with no script: Next, after
// FinishSteps has given it its one "run until-done" step.
type CmdFinish struct{}

// CmdFree records that the workers ran free on goroutines (the lab's g). It is never done again:
// Do refuses it, and no position after it can be rebuilt.
type CmdFree struct{}

// Do carries out c on the session. Like every Session method, it is not safe to call while
// another command runs.
func (s *Session) Do(ctx context.Context, c Command) (Result, error) { return c.run(ctx, s) }

func (CmdNext) run(ctx context.Context, s *Session) (Result, error) {
	acted, err := s.script.Next(ctx)
	return Result{Acted: acted}, err
}

func (c CmdStepWorker) run(ctx context.Context, s *Session) (Result, error) {
	ev, acted, err := s.crew.Step(ctx, c.Worker)
	if acted {
		s.off.left("a worker stepped by hand")
	}
	return Result{Acted: acted, Busy: err == nil && !acted && ev.Outcome == outcomeBusy}, err
}

func (c CmdCrash) run(_ context.Context, s *Session) (Result, error) {
	ev, err := s.crew.Crash(c.Worker)
	s.off.byHand(err, "a crash by hand")
	return Result{Event: ev}, err
}

func (c CmdRestart) run(ctx context.Context, s *Session) (Result, error) {
	ev, err := s.crew.Restart(ctx, c.Worker)
	s.off.byHand(err, "a restart by hand")
	return Result{Event: ev}, err
}

func (c CmdPause) run(_ context.Context, s *Session) (Result, error) {
	ws := s.crew.workers
	paused := c.Worker >= 0 && c.Worker < len(ws) && ws[c.Worker].View().Paused
	ev, err := s.crew.SetPaused(c.Worker, !paused)
	s.off.byHand(err, "a pause by hand")
	return Result{Event: ev}, err
}

func (c CmdToggle) run(_ context.Context, s *Session) (Result, error) {
	on, err := s.Settings().Get(c.Name)
	if err != nil {
		return Result{}, err
	}
	started := s.crew.started()
	ev, err := s.crew.SetToggle(c.Name, !on)
	if err == nil && started {
		s.off.toggled(c.Name, !on)
	}
	return Result{Event: ev}, err
}

func (c CmdClock) run(_ context.Context, s *Session) (Result, error) {
	s.off.left("the clock moved by hand")
	return Result{Event: s.crew.AdvanceClock(c.Delta)}, nil
}

func (CmdPastLease) run(ctx context.Context, s *Session) (Result, error) {
	ev, err := s.crew.ClockPastLease(ctx)
	s.off.byHand(err, "the clock moved by hand")
	return Result{Event: ev}, err
}

func (CmdFinish) run(ctx context.Context, s *Session) (Result, error) {
	s.script.FinishSteps()
	acted, err := s.script.Next(ctx)
	return Result{Acted: acted}, err
}

func (CmdFree) run(context.Context, *Session) (Result, error) {
	return Result{}, fmt.Errorf("a free run: %w", ErrNotReplayable)
}

// CmdRedrive is a redrive: the dead-lettered message Key goes back to Pending, with its
// attempts reset. It is guarded: refused (ErrNotNow) while the message is not dead-lettered.
type CmdRedrive struct{ Key string }

func (c CmdRedrive) run(ctx context.Context, s *Session) (Result, error) {
	ev, err := redrive(ctx, s, c.Key)
	s.off.byHand(err, "a redrive by hand")
	return Result{Event: ev}, err
}

// redrive moves the dead-lettered message key back to Pending, claimable at once, with its
// attempts reset (Redriver), and records it. A message that is not dead-lettered, or a key
// with no message, is refused with ErrNotNow and nothing changes.
func redrive(ctx context.Context, s *Session, key string) (Event, error) {
	r := s.env.caps.Redrive
	if r == nil {
		return Event{}, fmt.Errorf("redrive %s: this database cannot redrive: %w", key, ErrNotNow)
	}
	if err := r.Redrive(ctx, key); err != nil {
		if errors.Is(err, ErrNotDeadLettered) || errors.Is(err, ErrNoSuchMessage) {
			return Event{}, fmt.Errorf("redrive %s: %w: %w", key, err, ErrNotNow)
		}
		return Event{}, fmt.Errorf("redrive %s: %w", key, err)
	}
	s.env.world.Add(1)
	text := fmt.Sprintf("%s redriven: back to Pending, attempts reset, claimable at once", key)
	// The script is over, and its message is Pending again: the run goes on until the workers
	// have done what is left (one more "run until-done" step, on this session's copy of the
	// scenario), so that the verdict follows what they do with it.
	if sc, ok := s.script.extend(); ok {
		s.Scenario = sc
		text += "; the run goes on until the workers have done what is left"
	}
	return s.crew.event(Event{Kind: EvNote, Key: key, Text: text}), nil
}
