package explore

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"leaselab/engine"
)

// A search on several databases at once (Config.MoreDBs): each level's frontier is dealt out
// to the workers, each with its own database, tape and session, expanding its states as the
// search alone would; the seen set and the database copies (rows, which load into any of the
// databases) are shared behind one lock. What the workers find is merged at the end of the
// level in the order a search alone makes it: of two arrivals at one new state, the one first
// in that order (node.order) is the one kept, and of the violations found, the first in it is
// the one reported. So the result is the same whatever the number of workers: the same
// figures, the same states kept, the same schedule found (TestParallelAgrees).

// sharedState is what the workers of one search share: behind explorer.mu, whether a violation
// was found in this level and what cut the search; the progress figures; the waiting count.
type sharedState struct {
	violated bool
	cut      string
	progress *Result
	waiting  atomic.Int64
}

// candidate is a violation a worker found in a level, and where the search alone finds it.
type candidate struct {
	order  [2]int
	node   *node
	failed []engine.Check
	last   []string
	at     time.Duration
}

// cut is what cut the search, "" when nothing has.
func (x *explorer) cut() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.sh.cut
}

// setCut records what cut the search (the first reason stays).
func (x *explorer) setCut(why string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.sh.cut == "" {
		x.sh.cut = why
	}
}

// found records a violation: child breaks failed (x.mu held).
func (x *explorer) found(child *node, failed []engine.Check, s *engine.Session, before int) {
	c := candidate{order: child.order, node: child, failed: failed, at: x.cfg.Now().Sub(x.start)}
	for _, e := range s.Ledger().EventsSince(before) {
		c.last = append(c.last, e.Text)
	}
	x.cands = append(x.cands, c)
	x.sh.violated = true
}

// arrivedAgain counts child, whose state was seen before (was), and, when that state is new in
// this level, keeps of the two arrivals the one first in order, with only the moves asleep in
// both asleep (x.mu held). It reports whether child is now the one kept: the caller keeps its
// copy and hands it on to be explored.
func (x *explorer) arrivedAgain(child *node, was seenState, s *engine.Session, before int) bool {
	x.count(child.depth, was.violating)
	x.res.SeenBefore++
	if was.violating && int(was.depth) == child.depth {
		x.found(child, was.failed, s, before)
	}
	m := was.node
	if m == nil || m.depth != child.depth {
		return false
	}
	both := x.perms[m.perm].mask(m.sleep) & x.perms[child.perm].mask(child.sleep)
	if !less2(child.order, m.order) {
		m.sleep = x.perms[m.perm].unmask(both)
		return false
	}
	child.sleep = x.perms[child.perm].unmask(both)
	m.dropped = true
	was.node = child
	x.seen[child.key] = was
	return true
}

func less2(a, b [2]int) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }

// helper is a worker of the search on db, sharing x's seen set and copies.
func (x *explorer) helper(db engine.DB) *explorer {
	cfg := x.cfg
	cfg.DB = db
	return &explorer{cfg: cfg, mu: x.mu, sh: x.sh, tape: newTapeDB(db), want: x.want, seen: x.seen, images: x.images,
		start: x.start, nextLog: x.nextLog, res: &Result{}}
}

// level expands the frontier, on every worker, and returns the next level's frontier, in the
// order the search alone makes it.
func (x *explorer) level(ctx context.Context, frontier []*node) ([]*node, error) {
	x.mu.Lock()
	for _, n := range frontier {
		x.seen[n.key] = seenState{depth: int32(n.depth)} // explored: no longer woken
	}
	x.mu.Unlock()
	workers := []*explorer{x}
	if len(frontier) > 1 {
		workers = append(workers, x.helpers...)
	}
	kids := make([][]*node, len(frontier))
	errs := make([]error, len(workers))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w, wk := range workers {
		wk.perms, wk.root = x.perms, x.root
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := w; p < len(frontier); p += len(workers) {
				n := frontier[p]
				x.sh.waiting.Add(-1)
				children, err := wk.expand(ctx, n, p)
				kids[p] = children
				wk.release(n.db)
				if err != nil {
					errs[w] = err
					cancel()
					return
				}
				if wk.cut() != "" {
					return
				}
			}
		}()
	}
	wg.Wait()
	x.gather(workers[1:])
	next := x.nextFrontier(kids)
	x.chooseViolation()
	x.res.Cut = x.cut()
	for _, err := range errs {
		if err != nil && ctx.Err() == nil || err != nil && x.res.Cut == "" {
			return next, err
		}
	}
	return next, nil
}

// gather adds the helpers' figures, bound counts, violations found and errors for a level to
// the search's.
func (x *explorer) gather(helpers []*explorer) {
	for _, h := range helpers {
		merge(x.res, h.res)
		h.res = &Result{}
		x.atBound += h.atBound
		h.atBound = 0
		x.cands = append(x.cands, h.cands...)
		h.cands = nil
		if x.verr == nil {
			x.verr = h.verr
		}
	}
}

// nextFrontier is the next level's frontier: the children of the level's states, in order,
// but those dropped (their databases released).
func (x *explorer) nextFrontier(kids [][]*node) []*node {
	var next []*node
	for _, ks := range kids {
		for _, k := range ks {
			if k.dropped {
				x.release(k.db)
				continue
			}
			next = append(next, k)
		}
	}
	return next
}

// chooseViolation makes the first violation, in the order the search alone makes, the
// result's, of those the level's workers found.
func (x *explorer) chooseViolation() {
	if len(x.cands) == 0 {
		return
	}
	first := slices.MinFunc(x.cands, func(a, b candidate) int {
		if less2(a.order, b.order) {
			return -1
		}
		if less2(b.order, a.order) {
			return 1
		}
		return 0
	})
	x.res.Violation = &Violation{Schedule: first.node.schedule(), Failed: first.failed, Last: first.last}
	x.res.FirstViolation = slices.MinFunc(x.cands, func(a, b candidate) int { return int(a.at - b.at) }).at
	x.vnode = first.node
	x.cands = nil
}

// merge adds a worker's figures for a level to the search's.
func merge(to, from *Result) {
	to.States += from.States
	to.Moves += from.Moves
	to.Distinct += from.Distinct
	to.SeenBefore += from.SeenBefore
	to.Pruned += from.Pruned
	if from.Unstored > 0 && (to.Unstored == 0 || from.FirstUnstored < to.FirstUnstored) {
		to.FirstUnstored = from.FirstUnstored
	}
	to.Unstored += from.Unstored
	for d, c := range from.ByDepth {
		for len(to.ByDepth) <= d {
			to.ByDepth = append(to.ByDepth, DepthCount{})
		}
		to.ByDepth[d].States += c.States
		to.ByDepth[d].Violating += c.Violating
	}
	to.Restores += from.Restores
	to.Replayed += from.Replayed
	to.RestoreTime += from.RestoreTime
	to.ReplayTime += from.ReplayTime
	to.MoveTime += from.MoveTime
	to.CheckTime += from.CheckTime
	to.CopyTime += from.CopyTime
	to.KeyTime += from.KeyTime
	for _, id := range from.Broken {
		if !slices.Contains(to.Broken, id) {
			to.Broken = append(to.Broken, id)
		}
	}
	slices.Sort(to.Broken)
}
