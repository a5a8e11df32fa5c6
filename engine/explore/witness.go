package explore

import (
	"context"
	"fmt"
	"strings"

	"leaselab/engine"
)

// A violation's witness in words: which check failed, on which message, and the one or two
// moves that made it fail, read from the events the schedule's run recorded (the session is
// driven through the schedule again from the tape, so the events are the run's own). And the
// point of no return: for each prefix of the schedule, the share of its continuations that
// still fail, and the move after which every continuation does.

// Witness says why a violation's check failed.
type Witness struct {
	Check string // the check's id
	Key   string // the message, "" when no event named one
	// Moves are the moves (1-based) that made it fail: the last, and before it the other
	// worker's move on the same message that it failed against (0 when there is none).
	Last, Before int
	Text         string
}

// movesEvents replays n's schedule from the tape into a new session and returns, for each move
// (0: the start), the events it recorded.
func (x *explorer) movesEvents(ctx context.Context, n *node) ([][]engine.Event, error) {
	path := n.path()
	if x.sess != nil {
		x.sess.Close()
		x.sess = nil
	}
	segs := [][]call{x.root.calls}
	for _, m := range path {
		segs = append(segs, m.calls)
	}
	x.tape.begin(replay, segs)
	defer func() { x.tape.mode = live }()
	s, err := engine.NewSessionWith(ctx, x.cfg.Scenario, x.tape, engine.SessionOptions{Seed: true})
	if err != nil {
		return nil, fmt.Errorf("explore: replay the start: %w", err)
	}
	x.sess = s
	marks := []int{s.Ledger().EventCount()}
	for _, m := range path {
		if err := apply(ctx, s, m.t); err != nil {
			return nil, fmt.Errorf("explore: replay %s: %w", m.t, err)
		}
		marks = append(marks, s.Ledger().EventCount())
	}
	out := make([][]engine.Event, len(marks))
	for i := 1; i < len(marks); i++ {
		evs := s.Ledger().EventsSince(marks[i-1])
		out[i] = evs[:min(len(evs), marks[i]-marks[i-1])]
	}
	x.dbKnown = false // the tape answered: the database is as the search left it, but forget it anyway
	return out, nil
}

// keyed is the last event of evs that names a message.
func keyed(evs []engine.Event) (engine.Event, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Key != "" && evs[i].Kind != engine.EvNote {
			return evs[i], true
		}
	}
	return engine.Event{}, false
}

// pastTense is what an event of each kind did to its message.
var pastTense = map[engine.EventKind]string{
	engine.EvLoad: "loaded", engine.EvClaim: "claimed", engine.EvSelect: "selected", engine.EvTake: "took",
	engine.EvLock: "locked", engine.EvCheck: "called the provider for", engine.EvRenew: "renewed",
	engine.EvFinalize: "finalized", engine.EvFail: "released", engine.EvCrash: "crashed holding",
	engine.EvPause: "paused holding", engine.EvResume: "woke holding", engine.EvRescue: "rescued",
}

func did(e engine.Event) string {
	if v, ok := pastTense[e.Kind]; ok {
		return v
	}
	return string(e.Kind)
}

// lease is " under lease v2" when the event names a lease version.
func lease(e engine.Event) string {
	if e.Version > 0 {
		return fmt.Sprintf(" under lease v%d", e.Version)
	}
	return ""
}

// takes reports whether an event of kind k is what a check's failure is against: a finalize the
// rescue undid, for no-undone-finish; a move that gave the message an owner, for the others.
func takes(check string, k engine.EventKind) bool {
	if check == engine.CheckNoUndoneFinish {
		return k == engine.EvFinalize
	}
	switch k {
	case engine.EvClaim, engine.EvTake, engine.EvLock, engine.EvLoad, engine.EvRescue:
		return true
	}
	return false
}

// setLease is " as v2" for a move that set the lease version, " under lease v2" for one that
// held it.
func setLease(e engine.Event) string {
	switch {
	case e.Version == 0:
		return ""
	case e.Kind == engine.EvClaim || e.Kind == engine.EvTake || e.Kind == engine.EvLock:
		return fmt.Sprintf(" as v%d", e.Version)
	}
	return lease(e)
}

// witness builds the violation's witness from each move's events.
func witness(v *Violation, evs [][]engine.Event) *Witness {
	n := len(v.Schedule)
	if n == 0 || len(v.Failed) == 0 || len(evs) != n+1 {
		return nil
	}
	w := &Witness{Check: v.Failed[0].ID, Last: n}
	last, ok := keyed(evs[n])
	if !ok {
		w.Text = fmt.Sprintf("%s failed at move %d (%s)", w.Check, n, v.Schedule[n-1])
		return w
	}
	w.Key = last.Key
	who := last.Worker
	if who == "" {
		who = v.Schedule[n-1].Who
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s broke at move %d: %s %s %s%s", w.Check, n, who, did(last), last.Key, lease(last))
	// The other move: another worker's latest move on the message that the check fails against
	// (takes), or else its latest move on it of any kind.
	for _, owning := range []bool{true, false} {
		for j := n - 1; j >= 1 && w.Before == 0; j-- {
			e, ok := keyed(evs[j])
			if !ok || e.Key != last.Key || e.Worker == last.Worker || e.Worker == "" || owning && !takes(w.Check, e.Kind) {
				continue
			}
			w.Before = j
			fmt.Fprintf(&b, " after %s %s it%s at move %d", e.Worker, did(e), setLease(e), j)
		}
	}
	if last.Kind == engine.EvFinalize {
		switch {
		case last.Fenced:
			fmt.Fprintf(&b, "; %s's finalize checked the lease version", who)
		case last.OwnerCheck:
			fmt.Fprintf(&b, "; %s's finalize checked LockedBy only", who)
		default:
			fmt.Fprintf(&b, "; %s's finalize checked nothing", who)
		}
	}
	w.Text = b.String()
	return w
}

// shareBudget bounds the moves made to measure a violation's point of no return: past it the
// shares are left unmeasured.
const shareBudget = 20_000

// errShareBudget ends a measure of shares that would cost more than shareBudget moves.
var errShareBudget = fmt.Errorf("explore: more than %d moves to measure the shares", shareBudget)

// shareKey is a state and the moves left.
type shareKey struct {
	key  [2]uint64
	left int
}

// shares measures, for each prefix of the violation's schedule (0: none of it, to n: all of
// it), the share of its continuations of the schedule's remaining length that break a searched
// check, each next move chosen among the possible ones with equal chance: 1 means every
// continuation fails. The last prefix is the violation: 1.
func (x *explorer) shares(ctx context.Context, vn *node) ([]float64, error) {
	path := append([]*node{x.root}, vn.path()...)
	n := len(path) - 1
	out := make([]float64, n+1)
	out[n] = 1
	memo := map[shareKey]float64{}
	budget := shareBudget
	defer func() {
		for _, p := range path[1:] {
			x.release(p.db)
		}
	}()
	for k := 0; k < n; k++ {
		p := path[k]
		if k > 0 {
			// Bring the prefix's state back and keep a copy of its database, as the search did.
			s, err := x.restore(ctx, path[k-1])
			if err != nil {
				return nil, err
			}
			if err := apply(ctx, s, p.t); err != nil {
				return nil, err
			}
			if wrote(x.tape.take()) {
				x.dbKnown, x.cur = false, nil
			}
			rows, dbKey, _, _, err := x.look(ctx, s)
			if err != nil {
				return nil, err
			}
			if p.db, err = x.keep(ctx, dbKey); err != nil {
				return nil, err
			}
			p.rows = rows
		}
		v, err := x.share(ctx, p, n-k, memo, &budget)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// share is the share of n's continuations of left moves that break a searched check.
func (x *explorer) share(ctx context.Context, n *node, left int, memo map[shareKey]float64, budget *int) (float64, error) {
	s, err := x.restore(ctx, n)
	if err != nil {
		return 0, err
	}
	moves := enabled(ctx, s, n.rows, n.used, x.cfg.Bounds)
	if len(moves) == 0 {
		return 0, nil
	}
	sum := 0.0
	for i, t := range moves {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if *budget--; *budget < 0 {
			return 0, errShareBudget
		}
		if i > 0 {
			if s, err = x.restore(ctx, n); err != nil {
				return 0, err
			}
		}
		if err := apply(ctx, s, t); err != nil {
			return 0, err
		}
		calls := x.tape.take()
		if wrote(calls) {
			x.dbKnown, x.cur = false, nil
		}
		rows, dbKey, key, _, err := x.look(ctx, s)
		if err != nil {
			return 0, err
		}
		u := n.used.after(t)
		k := shareKey{withUsed(key, u), left - 1}
		if v, ok := memo[k]; ok {
			sum += v
			continue
		}
		failed, err := x.checks(ctx, s)
		if err != nil {
			return 0, err
		}
		v := 0.0
		switch {
		case len(failed) > 0:
			v = 1
		case left > 1:
			child := &node{parent: n, t: t, calls: calls, depth: n.depth + 1, used: u, rows: rows}
			if child.db, err = x.keep(ctx, dbKey); err != nil {
				return 0, err
			}
			v, err = x.share(ctx, child, left-1, memo, budget)
			x.release(child.db)
			if err != nil {
				return 0, err
			}
		}
		memo[k] = v
		sum += v
	}
	return sum / float64(len(moves)), nil
}

// noReturn is the move (1-based) after which every continuation fails: the first prefix whose
// share is 1.
func noReturn(shares []float64) int {
	for k := 1; k < len(shares); k++ {
		if shares[k] >= 1 {
			return k
		}
	}
	return len(shares) - 1
}
