package explore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"leaselab/engine"
)

// Kind is what a transition does.
type Kind int

// The transitions the search tries from a state.
const (
	// Act: a worker takes its next action (its claim, select, take, load, check, renew or
	// finalize: one transaction or one provider call).
	Act Kind = iota
	// Crash: a worker that holds something crashes (it loses its memory; its rows stay).
	Crash
	// Restart: a crashed worker comes back with empty memory.
	Restart
	// Pause: a worker that holds something stops (it still believes it owns what it holds).
	Pause
	// Resume: a paused worker wakes.
	Resume
	// Clock: the scenario clock moves to At: 1 ms past a live lease's end by some worker's
	// clock, or to a worker's timer (a provider answer, a heartbeat, a blocking lease's end).
	Clock
	// Scan: the rescuer reads the leases that have ended.
	Scan
	// Rescue: the rescuer writes each lease its read returned back to Pending.
	Rescue
)

// Transition is one move of a schedule.
type Transition struct {
	Kind   Kind
	Worker int           // Act, Crash, Restart, Pause, Resume: the worker's index
	Who    string        // the worker's or the rescuer's short name: "A", "R"
	Action engine.Action // Act: the action
	At     time.Time     // Clock: the time the clock moves to
}

// String is the transition as a scenario's steps write it: "A claim", "clock 09:00:00.501Z".
func (t Transition) String() string {
	switch t.Kind {
	case Act:
		return t.Who + " " + t.Action.String()
	case Crash:
		return t.Who + " crash"
	case Restart:
		return t.Who + " restart"
	case Pause:
		return t.Who + " pause"
	case Resume:
		return t.Who + " resume"
	case Clock:
		return "clock " + engine.FormatClock(t.At)
	case Scan:
		return t.Who + " scan"
	case Rescue:
		return t.Who + " rescue"
	}
	return fmt.Sprintf("transition %d", t.Kind)
}

// used counts what a schedule has spent of the bounds.
type used struct{ crashes, clockMoves, pauses int }

func (u used) after(t Transition) used {
	switch t.Kind {
	case Crash:
		u.crashes++
	case Clock:
		u.clockMoves++
	case Pause:
		u.pauses++
	}
	return u
}

// enabled lists the transitions the bounds allow from the session's state, in a fixed order:
// the workers' actions, restarts, crashes, pauses and wakes, the rescuer, then the clock.
//
// Left out, because they reach no state the others do not: a worker's poll that would find
// what its last one found (nothing has changed since: Worker.Runnable), a crash or a pause of
// a worker that holds nothing (crashing it and restarting it is where it was; not stepping it
// is the same as pausing it), and a rescue with no read before it (a scan, then the rescue).
func enabled(ctx context.Context, s *engine.Session, rows []engine.Row, u used, b Bounds) []Transition {
	var out []Transition
	ws := s.Workers()
	for i, w := range ws {
		if w.Runnable() {
			out = append(out, Transition{Kind: Act, Worker: i, Who: w.Short, Action: w.Next()})
		}
	}
	for i, w := range ws {
		v := w.View()
		switch {
		case v.Crashed:
			out = append(out, Transition{Kind: Restart, Worker: i, Who: w.Short})
		case v.Paused:
			out = append(out, Transition{Kind: Resume, Worker: i, Who: w.Short})
		}
	}
	if u.crashes < b.Crashes {
		for i, w := range ws {
			if w.Holds() {
				out = append(out, Transition{Kind: Crash, Worker: i, Who: w.Short})
			}
		}
	}
	if u.pauses < b.Pauses {
		for i, w := range ws {
			if w.Holds() && !w.View().Paused {
				out = append(out, Transition{Kind: Pause, Worker: i, Who: w.Short})
			}
		}
	}
	if r := s.Rescuer(); r != nil {
		out = append(out, Transition{Kind: Scan, Who: r.Short})
		if r.Holding() > 0 {
			out = append(out, Transition{Kind: Rescue, Who: r.Short})
		}
	}
	if u.clockMoves < b.ClockMoves {
		for _, at := range clockTargets(s, rows) {
			out = append(out, Transition{Kind: Clock, At: at})
		}
	}
	// The moves that write go last: the ones before them leave the database as it is, and the
	// next move needs no copy brought back. The order within a level does not change which
	// depth the first violation is found at.
	slices.SortStableFunc(out, func(a, b Transition) int { return cmpBool(a.writes(), b.writes()) })
	return out
}

// writes reports whether the move may write to the database.
func (t Transition) writes() bool {
	switch t.Kind {
	case Act:
		return t.Action != engine.ActSelect && t.Action != engine.ActLoad && t.Action != engine.ActCheck
	case Rescue:
		return true
	}
	return false
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// clockTargets are the times worth moving the clock to, in order: 1 ms past each live lease's
// end as each worker's clock reads it, and each worker's timer.
func clockTargets(s *engine.Session, rows []engine.Row) []time.Time {
	now := s.Clock().Now()
	var ts []time.Time
	add := func(t time.Time) {
		if t.After(now) && !slices.ContainsFunc(ts, t.Equal) {
			ts = append(ts, t)
		}
	}
	offsets := s.Probe().ClockOffsets()
	for _, r := range rows {
		if r.Status != engine.StatusProcessing || r.LockedUntil.IsZero() || r.LockedUntil.Before(now) {
			continue
		}
		for _, o := range offsets {
			add(r.LockedUntil.Add(time.Millisecond - o))
		}
	}
	for _, w := range s.Workers() {
		if t := w.Timer(); !t.IsZero() {
			add(t)
		}
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	return ts
}

// apply carries out t on the session.
func apply(ctx context.Context, s *engine.Session, t Transition) error {
	var err error
	switch t.Kind {
	case Act:
		var acted bool
		_, acted, err = s.Crew().Step(ctx, t.Worker)
		if err == nil && !acted {
			err = fmt.Errorf("%s: nothing to do", t)
		}
	case Crash:
		_, err = s.Crew().Crash(t.Worker)
	case Restart:
		_, err = s.Crew().Restart(ctx, t.Worker)
	case Pause, Resume:
		_, err = s.Crew().SetPaused(t.Worker, t.Kind == Pause)
	case Clock:
		_, err = s.Crew().SetClock(t.At)
	case Scan:
		err = s.Probe().RescuerScan(ctx)
	case Rescue:
		err = s.Probe().RescuerRescue(ctx)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	return nil
}
