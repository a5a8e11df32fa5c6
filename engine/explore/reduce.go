package explore

import (
	"context"
	"fmt"

	"leaselab/engine"
)

// The partial-order reduction: sleep sets (Godefroid, 1996). Two moves commute when, from a
// state where both can be made, either order ends in the same state. Here that is judged from
// what each move did (the database calls on its tape) and the message its worker held: two
// workers' actions commute unless one wrote what the other read or wrote — a claim (or a rescue)
// reads and may write any row, a select or a load reads every row, a take, renew, finalize or a
// failed attempt's write touches only its own message's row, a provider call none but counts per
// message (the second caller of one message gets the second transaction id), so two actions on
// one message never commute. Crashes, restarts, pauses, the clock and the rescuer commute with
// nothing. A move tried from a state is put to sleep in its later siblings' states while only
// moves it commutes with are made: making it there reaches a state the sibling before it
// reached already by the other order, at the same depth. Sleep sets leave out moves, never
// states: every state the full search reaches is reached, at the same depth, so the shortest
// violations and the proofs are the same (TestReductionsAgree), and every pair this calls
// commuting is made in both orders by TestIndependentMovesCommute.
//
// The seen set keeps each state's sleep set while it waits. A state reached again within its
// own level (before it is explored) keeps asleep only the moves asleep in both (the
// intersection); reached again at a deeper level, it is not explored again: every state its
// moves reach is reached at a shallower depth through its first arrival.

// moveInfo is what decides whether a move commutes with another: whose it is, what it does, the
// message its worker held before it, and what it read and wrote (from its database calls).
type moveInfo struct {
	kind     Kind
	worker   int
	action   engine.Action
	key      string // the message its worker held ("" none, or not known)
	readAll  bool   // it read every row (a claim's search, a select, a load)
	writeAll bool   // it may have written any row (a claim, a rescue) or one not known
	writeKey bool   // it wrote its own message's row only (take, renew, finalize, fail)
	provider bool   // it called the provider for its message
	wrote    bool
}

// infoOf is t's moveInfo before it is made (what it read and wrote is learnt from its calls).
func infoOf(s *engine.Session, t Transition) moveInfo {
	mi := moveInfo{kind: t.Kind, worker: t.Worker, action: t.Action}
	if t.Kind == Act || t.Kind == Crash {
		mi.key = s.Workers()[t.Worker].View().Holding
		mi.provider = t.Action == engine.ActCheck
	}
	return mi
}

// bit is the move's bit in a sleep set: a worker's action, or its crash (the only moves that
// sleep).
func bit(kind Kind, worker int) uint64 {
	if kind == Crash {
		return 1 << (32 + worker)
	}
	return 1 << worker
}

// sleeps reports whether a move of this kind can be put to sleep.
func sleeps(k Kind) bool { return k == Act || k == Crash }

// learn reads what the move read and wrote from its database calls.
func (mi *moveInfo) learn(calls []call) {
	for _, c := range calls {
		switch c.op {
		case "connect":
		case "load", "select", "expired", "snapshot", "rows", "txids", "counts":
			mi.readAll = true
		case "take", "renew", "finalize", "fail":
			if mi.key == "" {
				mi.readAll, mi.writeAll = true, true
			} else {
				mi.writeKey = true
			}
		default: // a claim, a rescue, a creation, or a call not known here: any row
			mi.readAll, mi.writeAll = true, true
		}
	}
	mi.wrote = mi.writeAll || mi.writeKey
}

// independent reports whether u and t commute (see above).
func independent(u, t moveInfo) bool {
	if !sleeps(u.kind) || !sleeps(t.kind) || u.worker == t.worker || u.writeAll || t.writeAll {
		return false
	}
	if u.kind == Crash || t.kind == Crash {
		// A crash writes nothing to the database and changes its own worker: it commutes with
		// another worker's action on another message (it leaves its message as it was).
		c, o := u, t
		if t.kind == Crash {
			c, o = t, u
		}
		return o.kind == Act && c.key != "" && o.key != "" && c.key != o.key
	}
	if u.readAll && t.wrote || t.readAll && u.wrote {
		return false
	}
	uKeyed, tKeyed := u.writeKey || u.provider, t.writeKey || t.provider
	if uKeyed && tKeyed && (u.key == "" || t.key == "" || u.key == t.key) {
		return false
	}
	return true
}

// sleeping are the moves asleep at n (bit i of n.sleep: worker i's next action), as they were
// made where they were put to sleep: each does the same here, since only moves of other
// workers that commute with it have been made since (nothing it reads was written).
func sleeping(n *node) []moveInfo {
	var out []moveInfo
	for _, u := range n.slept {
		if n.sleep&bit(u.kind, u.worker) != 0 {
			out = append(out, u)
		}
	}
	return out
}

// verify is Config.verifyCommute: every pair of n's moves made that independent calls
// commuting is made in both orders from n, and the two states' keys must be equal.
func (x *explorer) verify(ctx context.Context, n *node, moves []Transition, done []moveInfo) {
	if x.verr != nil {
		return
	}
	byWorker := map[uint64]Transition{}
	for _, t := range moves {
		if sleeps(t.Kind) {
			byWorker[bit(t.Kind, t.Worker)] = t
		}
	}
	for i, u := range done {
		for _, t := range done[i+1:] {
			if !independent(u, t) {
				continue
			}
			var keys [2][2]uint64
			mu, mt := byWorker[bit(u.kind, u.worker)], byWorker[bit(t.kind, t.worker)]
			for k, order := range [2][2]Transition{{mu, mt}, {mt, mu}} {
				s, err := x.restore(ctx, n)
				if err == nil {
					err = apply(ctx, s, order[0])
				}
				if err == nil {
					err = apply(ctx, s, order[1])
				}
				x.tape.take()
				x.dbKnown, x.cur = false, nil
				if err != nil {
					x.verr = fmt.Errorf("verify %s, %s after %v: %w", order[0], order[1], n.schedule(), err)
					return
				}
				_, _, key, _, err := x.look(ctx, s)
				if err != nil {
					x.verr = err
					return
				}
				keys[k] = key
			}
			if keys[0] != keys[1] {
				x.verr = fmt.Errorf("%s and %s after %v do not commute: two states", mu, mt, n.schedule())
				return
			}
		}
	}
}
