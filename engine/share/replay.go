package share

import (
	"bytes"
	"context"
	"fmt"

	"leaselab/engine"
	"leaselab/engine/explore"
	"leaselab/engine/scenario"
)

// FoundScenario is the scenario file a counterexample opens as: the source (src, read from
// the file called name) with the overrides applied and its script replaced by the schedule,
// as explore --out writes it (explore.WriteScenario). Replaying one CmdNext per move of the
// schedule brings a session of it to the counterexample's end. Its header has no witness and
// no point of no return: the code does not carry them.
func FoundScenario(name string, src []byte, o engine.Overrides, f *Found) ([]byte, error) {
	sc, err := scenario.Parse(name, src)
	if err != nil {
		return nil, err
	}
	if err := sc.Apply(o); err != nil {
		return nil, err
	}
	v := &explore.Violation{Schedule: make([]explore.Transition, len(f.Schedule))}
	for _, id := range f.Checks {
		v.Failed = append(v.Failed, engine.Check{ID: id})
	}
	for i, t := range f.Schedule {
		switch t.Kind {
		case explore.Act, explore.Crash, explore.Restart, explore.Pause, explore.Resume:
			if t.Worker >= len(sc.Workers) {
				return nil, fmt.Errorf("move %d (%s) names worker %d of %s, which has %d", i+1, t, t.Worker+1, sc.Name, len(sc.Workers))
			}
			t.Who = sc.Workers[t.Worker].Short
		case explore.Scan, explore.Rescue:
			if sc.Rescuer == nil {
				return nil, fmt.Errorf("move %d is the rescuer's, and %s has none", i+1, sc.Name)
			}
			t.Who = sc.Rescuer.Short
		}
		v.Schedule[i] = t
	}
	var b bytes.Buffer
	if err := explore.WriteScenario(&b, src, sc, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Counterexample is the code of a violation explore found in the scenario lesson (or file)
// opened with overrides o: the schedule, the checks it broke, and one step per move, which
// open the lab at its end.
func Counterexample(lesson string, file []byte, o engine.Overrides, v *explore.Violation) Code {
	f := &Found{Schedule: v.Schedule}
	for _, c := range v.Failed {
		f.Checks = append(f.Checks, c.ID)
	}
	moves := make([]engine.Command, len(v.Schedule))
	for i := range moves {
		moves[i] = engine.CmdNext{}
	}
	return Code{Lesson: lesson, File: file, Overrides: o, Found: f, Moves: moves}
}

// MovesOf are the commands of recorded moves (a history's entries up to its position), up to
// the first one that cannot be replayed exactly (a concurrent phase, a free run); all says
// whether that is every one of them.
func MovesOf(entries []engine.Entry) (moves []engine.Command, all bool) {
	for _, e := range entries {
		if !e.Exact || e.Command == nil {
			return moves, false
		}
		moves = append(moves, e.Command)
	}
	return moves, true
}

// Replay makes moves on h's session from where it stands, each recorded in h as the lab
// records a key's command, so that the lab can step back through them. A move that failed
// part way when it was made (a script step the moves before it made impossible) is recorded
// as the lab recorded it, and fails the same way again; one that fails and changes nothing
// cannot be one the lab recorded: the replay stops there, and says which.
func Replay(ctx context.Context, h *engine.History, moves []engine.Command) error {
	for i, c := range moves {
		p := h.Begin()
		res, err := h.Session().Do(ctx, c)
		if !h.Commit(c, p, res.Acted) && err != nil {
			return fmt.Errorf("the code's move %d of %d: %w", i+1, len(moves), err)
		}
	}
	return nil
}
