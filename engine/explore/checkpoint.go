package explore

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"slices"
)

// A checkpoint is the search at the end of a level: the figures so far, the seen set and the
// schedules of the states waiting to be explored. Saved at the end of every level (Config.
// Checkpoint), it lets a search cut by an interrupt or its time limit go on from the last level
// it finished (Config.Resume), or a proof go deeper. Waiting states are brought back by running
// their schedules again, each prefix once; their sleep sets start empty (a smaller sleep set
// explores more, never less).

// ErrNotThisSearch is a checkpoint that this search cannot go on from.
var ErrNotThisSearch = errors.New("explore: the checkpoint is not of this search")

// checkpointVersion is the file's format; a file of another is refused.
const checkpointVersion = 1

// Checkpoint is a search saved at the end of a level.
type Checkpoint struct {
	Version int
	// Fingerprint is what the search was of: the scenario, its settings and workers, the
	// bounds but the depth, time and states bounds, the checks and the reductions. A search of
	// anything else refuses to resume it.
	Fingerprint string
	Depth       int // the levels done
	Stats       Stats
	AtBound     int
	Seen        []SeenKey
	Waiting     [][]Transition // the schedules of the states waiting to be explored
}

// SeenKey is one seen state's key and the depth it was first reached at.
type SeenKey struct {
	K0, K1 uint64
	Depth  int32
}

// WriteTo writes the checkpoint (gob).
func (c *Checkpoint) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	err := gob.NewEncoder(cw).Encode(c)
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadCheckpoint reads a checkpoint WriteTo wrote.
func ReadCheckpoint(r io.Reader) (*Checkpoint, error) {
	var c Checkpoint
	if err := gob.NewDecoder(r).Decode(&c); err != nil {
		return nil, fmt.Errorf("not a checkpoint of leaselab explore: %w", err)
	}
	if c.Version != checkpointVersion {
		return nil, fmt.Errorf("a checkpoint of format %d; this leaselab reads %d", c.Version, checkpointVersion)
	}
	return &c, nil
}

// fingerprint is what a checkpoint must match to be resumed by this search.
func (x *explorer) fingerprint() string {
	sc, b := x.cfg.Scenario, x.cfg.Bounds
	return fmt.Sprintf("%s|%+v|%+v|%d messages|seed %d|crashes %d clock %d pauses %d|%v|sym %t sleep %t|%s", sc.Name, sc.Settings,
		sc.Workers, sc.Messages, sc.Seed, b.Crashes, b.ClockMoves, b.Pauses, x.cfg.Checks, !x.cfg.NoSymmetry, !x.cfg.NoSleepSets, x.cfg.Restore)
}

// checkpoint saves the search at the end of level depth, frontier waiting.
func (x *explorer) checkpoint(depth int, frontier []*node) error {
	c := &Checkpoint{Version: checkpointVersion, Fingerprint: x.fingerprint(), Depth: depth, Stats: x.res.Stats, AtBound: x.atBound}
	c.Stats.Elapsed = x.cfg.Now().Sub(x.start) + x.resumed
	for k, st := range x.seen {
		c.Seen = append(c.Seen, SeenKey{k[0], k[1], st.depth})
	}
	for _, n := range frontier {
		c.Waiting = append(c.Waiting, n.schedule())
	}
	return x.cfg.Checkpoint(c)
}

// resume loads a checkpoint: the figures, the seen set, and the waiting states, brought back
// by running their schedules again from the start (each prefix once). It returns the frontier.
func (x *explorer) resume(ctx context.Context, c *Checkpoint) ([]*node, error) {
	if c.Fingerprint != x.fingerprint() {
		return nil, fmt.Errorf("%w: another scenario, settings, bounds or reductions", ErrNotThisSearch)
	}
	if c.Depth >= x.cfg.Bounds.Depth {
		return nil, fmt.Errorf("%w: it is at depth %d already; ask for a deeper --depth", ErrNotThisSearch, c.Depth)
	}
	x.res.Stats = c.Stats
	x.resumed = c.Stats.Elapsed
	x.res.Elapsed = 0
	x.atBound = c.AtBound
	clear(x.seen)
	for _, s := range c.Seen {
		x.seen[[2]uint64{s.K0, s.K1}] = seenState{depth: s.Depth}
	}
	x.res.Depth = c.Depth
	var frontier []*node
	if err := x.replay(ctx, x.trieOf(c.Waiting), &frontier); err != nil {
		return nil, err
	}
	x.sh.waiting.Store(int64(len(frontier)))
	return frontier, nil
}

// trie is the waiting states of a checkpoint as a tree of their schedules, each node made once.
type trie struct {
	n    *node
	kids []*trie
	wait bool // a waiting state, not only a prefix of one
}

// trieOf is the tree of the waiting schedules, from the search's root.
func (x *explorer) trieOf(waiting [][]Transition) *trie {
	root := &trie{n: x.root}
	for _, sched := range waiting {
		at := root
		for _, t := range sched {
			i := slices.IndexFunc(at.kids, func(k *trie) bool { return sameMove(k.n.t, t) })
			if i < 0 {
				at.kids = append(at.kids, &trie{n: &node{parent: at.n, t: t, depth: at.n.depth + 1, used: at.n.used.after(t)}})
				i = len(at.kids) - 1
			}
			at = at.kids[i]
		}
		at.wait = true
	}
	return root
}

// replay brings back the states below at by running their moves again, each prefix once,
// keeping the databases of the waiting ones, which it adds to frontier.
func (x *explorer) replay(ctx context.Context, at *trie, frontier *[]*node) error {
	for _, k := range at.kids {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := x.restore(ctx, at.n)
		if err != nil {
			return err
		}
		if err := apply(ctx, s, k.n.t); err != nil {
			return fmt.Errorf("explore: resume: %s: %w", k.n.t, err)
		}
		k.n.calls = x.tape.take()
		if wrote(k.n.calls) {
			x.dbKnown, x.cur = false, nil
		}
		rows, dbKey, key, perm, err := x.look(ctx, s)
		if err != nil {
			return err
		}
		k.n.key, k.n.perm, k.n.rows = withUsed(key, k.n.used), perm, rows
		if k.n.db, err = x.keep(ctx, dbKey); err != nil {
			return err
		}
		if k.wait {
			*frontier = append(*frontier, k.n)
			x.seen[k.n.key] = seenState{depth: int32(k.n.depth), node: k.n}
		}
		if len(k.kids) > 0 {
			if err := x.replay(ctx, k, frontier); err != nil {
				return err
			}
		}
		if !k.wait {
			x.release(k.n.db)
		}
	}
	return nil
}

// sameMove reports whether two moves are one (times by their instant, as a file reads them back).
func sameMove(a, b Transition) bool {
	return a.Kind == b.Kind && a.Worker == b.Worker && a.Who == b.Who && a.Action == b.Action && a.At.Equal(b.At)
}
