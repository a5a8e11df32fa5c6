package explore

import (
	"slices"

	"leaselab/engine"
)

// renaming is one way of swapping interchangeable workers (engine.Probe.Interchangeable): to[i]
// is the worker whose names worker i takes, order the workers in the order they are written
// (order[to[i]] = i), names and ids each worker's name and id (LockedBy) to the one it becomes.
type renaming struct {
	to    []int
	order []int
	names map[string]string
	ids   map[string]string
}

// name maps a worker's name through the renaming (nil: none).
func (p *renaming) name() func(string) string {
	if p == nil {
		return same
	}
	return through(p.names)
}

// id maps a LockedBy value through the renaming (nil: none).
func (p *renaming) id() func(string) string {
	if p == nil {
		return same
	}
	return through(p.ids)
}

func through(m map[string]string) func(string) string {
	return func(s string) string {
		if n, ok := m[s]; ok {
			return n
		}
		return s
	}
}

// maxRenamings bounds the renamings tried per state: past it (more than five workers of one
// configuration) symmetry is left off, and the key is the plain one.
const maxRenamings = 120

// renamings are the session's symmetries: every permutation of its workers within groups of one
// configuration whose renaming of names is consistent (workers that share an id, as aba-fencing's
// A and A2 share Worker-A, are only swapped with workers that share theirs the same way). The
// identity is first; a session with no two interchangeable workers has only it.
func renamings(s *engine.Session) []*renaming {
	n := len(s.Workers())
	id := identity(n)
	out := []*renaming{nil}
	var perms [][]int
	permute(slices.Clone(id), 0, func(p []int) bool {
		if slices.Equal(p, id) {
			return true
		}
		for i, j := range p {
			if !s.Probe().Interchangeable(i, j) {
				return true
			}
		}
		perms = append(perms, slices.Clone(p))
		return len(perms) < maxRenamings
	})
	if len(perms) >= maxRenamings {
		return out
	}
	for _, p := range perms {
		if r := newRenaming(s, p); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// newRenaming is the renaming that gives worker i worker p[i]'s names, or nil when two names
// would map to two different ones.
func newRenaming(s *engine.Session, p []int) *renaming {
	r := &renaming{to: p, order: make([]int, len(p)), names: map[string]string{}, ids: map[string]string{}}
	backNames, backIDs := map[string]string{}, map[string]string{}
	for i, j := range p {
		r.order[j] = i
		n1, id1 := s.Probe().WorkerNames(i)
		n2, id2 := s.Probe().WorkerNames(j)
		if !mapTo(r.names, backNames, n1, n2) || !mapTo(r.ids, backIDs, id1, id2) {
			return nil
		}
	}
	return r
}

// mapTo adds a → b to the renaming m (back: its inverse), reporting false when a already goes
// elsewhere or b already comes from elsewhere.
func mapTo(m, back map[string]string, a, b string) bool {
	if to, ok := m[a]; ok && to != b {
		return false
	}
	if from, ok := back[b]; ok && from != a {
		return false
	}
	m[a], back[b] = b, a
	return true
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// permute calls fn with every permutation of p[k:] (p[:k] fixed), until fn returns false.
func permute(p []int, k int, fn func([]int) bool) bool {
	if k == len(p) {
		return fn(p)
	}
	for i := k; i < len(p); i++ {
		p[k], p[i] = p[i], p[k]
		ok := permute(p, k+1, fn)
		p[k], p[i] = p[i], p[k]
		if !ok {
			return false
		}
	}
	return true
}

// mask maps a sleep set (reduce.go's bits: worker i's action, bit i; its crash, bit 32+i)
// through the renaming: worker i's bits become worker to[i]'s.
func (p *renaming) mask(m uint64) uint64 { return p.mapBits(m, false) }

// unmask is mask's inverse.
func (p *renaming) unmask(m uint64) uint64 { return p.mapBits(m, true) }

// mapBits moves each worker's bits to its renamed worker's (back: the other way).
func (p *renaming) mapBits(m uint64, back bool) uint64 {
	if p == nil {
		return m
	}
	var out uint64
	for i, j := range p.to {
		from, to := i, j
		if back {
			from, to = j, i
		}
		for _, k := range []Kind{Act, Crash} {
			if m&bit(k, from) != 0 {
				out |= bit(k, to)
			}
		}
	}
	return out
}
