package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
)

// ErrNotReplayable is returned when a position can only be reached by replaying a concurrent
// phase or a free run, whose interleaving was the goroutines' own; it wraps ErrNotNow.
var ErrNotReplayable = fmt.Errorf("not replayable: %w", ErrNotNow)

// Opener builds a fresh session of the same scenario on a fresh database (the same --db file,
// re-created): the lab's Config.Open.
type Opener func(ctx context.Context) (*Session, error)

// Entry is one recorded command and what it did.
type Entry struct {
	Command Command
	// Exact is false for a move that ran workers free (a concurrent step, a free run): replaying
	// it would not give the same interleaving, so no position after it can be rebuilt.
	Exact bool
	// Acted is what the move reported: a step that performed an action.
	Acted bool
	// Mark is the timeline's glyph for it: 'x' a crash, 'r' a reclaim, '!' a rejected finalize,
	// '*' an ownership violation, '~' not replayable, '·' anything else.
	Mark rune
	// Summary is the move's last event in words.
	Summary string
	after   mark   // the session's position after the move
	trace   uint64 // a hash of the events the move wrote
}

// mark is where a session stands: enough to tell whether two runs reached the same place.
type mark struct {
	events, pc, stepN, actions int
	inStep                     bool
}

// Pending is the session's position before a move, from Begin.
type Pending struct{ before mark }

// History is the list of moves made on a run, and the way to bring the database back to the
// state after any of them: a fresh session on a fresh database, and the recorded moves replayed
// on it. Every move but a concurrent step or a free run is deterministic (the scenario clock,
// the seeded random source, the provider's rule), so the replay writes the same rows, the same
// ledgers and the same events, and Goto checks that it does.
type History struct {
	open    Opener
	sess    *Session
	entries []Entry
	pos     int // moves applied to sess
	dropped int // moves the last new future dropped
}

// NewHistory starts the history of s; open rebuilds it from scratch.
func NewHistory(s *Session, open Opener) *History { return &History{open: open, sess: s} }

// Session is the session at the current position.
func (h *History) Session() *Session { return h.sess }

// Len is the number of recorded moves; Pos how many of them the database holds now.
func (h *History) Len() int { return len(h.entries) }

// Pos is the current position: 0 at the start, Len at the newest move.
func (h *History) Pos() int { return h.pos }

// Entries returns a copy of the recorded moves.
func (h *History) Entries() []Entry { return append([]Entry(nil), h.entries...) }

// Dropped is how many recorded moves the last Commit dropped by starting a new future.
func (h *History) Dropped() int { return h.dropped }

// Begin notes where the session stands before a move.
func (h *History) Begin() Pending { return Pending{before: h.sess.script.here()} }

// Commit records command c, done on the session since p. A move that changed nothing is not
// recorded. When the position is in the past, a move that is the recorded next one (and did
// the same) moves along the recorded future; any other starts a new future and drops the old
// one (Dropped says how many moves). It returns whether the move was recorded.
func (h *History) Commit(c Command, p Pending, acted bool) bool {
	s := h.sess
	after := s.script.here()
	h.dropped = 0
	_, free := c.(CmdFree)
	if after == p.before && !free {
		return false
	}
	evs := s.ledger.EventsSince(p.before.events)
	e := Entry{Command: c, Acted: acted, Exact: !free && !ranConcurrent(s, p.before.pc, after.pc),
		after: after, trace: traceOf(evs), Mark: markOf(evs)}
	if !e.Exact {
		e.Mark = '~'
	}
	if len(evs) > 0 {
		e.Summary = evs[len(evs)-1].Text
	}
	if h.pos < len(h.entries) {
		if old := h.entries[h.pos]; old.Exact && e.Exact && old.Command == c && old.trace == e.trace && old.after == e.after {
			h.pos++
			return true
		}
		h.dropped = len(h.entries) - h.pos
		h.entries = h.entries[:h.pos]
	}
	h.entries = append(h.entries, e)
	h.pos++
	return true
}

// ranConcurrent reports whether script steps from..to (to exclusive) include a concurrent one.
func ranConcurrent(s *Session, from, to int) bool {
	steps := s.Scenario.Steps
	for i := from; i < to && i < len(steps); i++ {
		if steps[i].Kind == StepConcurrent {
			return true
		}
	}
	return false
}

func traceOf(evs []Event) uint64 {
	h := fnv.New64a()
	for _, e := range evs {
		fmt.Fprintf(h, "%d|%s|%s|%s|%s\n", e.Seq, e.String(), e.Kind, e.Worker, e.Outcome)
	}
	return h.Sum64()
}

func markOf(evs []Event) rune {
	m := '·'
	for _, e := range evs {
		switch {
		case e.Kind == EvFinalize && e.Outcome == OutcomeViolation:
			return '*'
		case e.Kind == EvFinalize && e.Outcome == OutcomeRejected:
			m = '!'
		case e.Kind == EvCrash && m == '·':
			m = 'x'
		case e.Kind == EvClaim && e.Outcome == OutcomeReclaimed && m != '!':
			m = 'r'
		}
	}
	return m
}

// Reachable says whether position t can be reached: every move before it must be replayable.
func (h *History) Reachable(t int) error {
	if t < 0 || t > len(h.entries) {
		return fmt.Errorf("step %d: the history has steps 0 to %d: %w", t, len(h.entries), ErrNotNow)
	}
	for i := 0; i < t; i++ {
		if !h.entries[i].Exact {
			if i >= h.pos && t > h.pos {
				return fmt.Errorf("step %d ran the workers free on goroutines: that cannot be done again exactly, "+
					"so the recorded future ends before it (step on to run it anew): %w", i+1, ErrNotReplayable)
			}
			return fmt.Errorf("step %d ran the workers free on goroutines, in an order that cannot be replayed exactly: "+
				"the lab goes back no further than step %d: %w", i+1, i, ErrNotReplayable)
		}
	}
	return nil
}

// Goto brings the session to position t: forward by doing the recorded moves again on it,
// back by rebuilding it on a fresh database and replaying moves 1..t. It returns the session
// (a new one after a rebuild: the old one is closed by the Opener).
func (h *History) Goto(ctx context.Context, t int) (*Session, error) {
	if err := h.Reachable(t); err != nil {
		return h.sess, err
	}
	if t < h.pos {
		s, err := h.open(ctx)
		if err != nil {
			return nil, fmt.Errorf("rebuild the database: %w", err)
		}
		h.sess, h.pos = s, 0
	}
	for h.pos < t {
		if err := h.redo(ctx, h.entries[h.pos]); err != nil {
			return h.sess, fmt.Errorf("replay step %d: %w", h.pos+1, err)
		}
		h.pos++
	}
	return h.sess, nil
}

// errDiverged is returned when a replayed move did not do what it did the first time.
var errDiverged = errors.New("the replay did not do what the recorded move did")

// redo does e's move again and checks it did the same.
func (h *History) redo(ctx context.Context, e Entry) error {
	s := h.sess
	before := s.script.here()
	if err := redo(ctx, s, e.Command, e.after); err != nil {
		return err
	}
	if got := s.script.here(); got != e.after || traceOf(s.ledger.EventsSince(before.events)) != e.trace {
		return fmt.Errorf("%w (%s)", errDiverged, e.Summary)
	}
	return nil
}

// redo does command c on s again, as the lab's key did it the first time. after is where it
// ended the first time: a CmdFinish of a scenario with no script calls Next until the session
// stands there.
func redo(ctx context.Context, s *Session, c Command, after mark) error {
	if _, ok := c.(CmdFinish); !ok {
		_, err := s.Do(ctx, c)
		return err
	}
	r := s.script
	r.FinishSteps()
	for r.here() != after && !r.Done() && s.crew.actions <= after.actions {
		if _, err := r.Next(ctx); err != nil {
			return err
		}
	}
	return nil
}
