package explore

import (
	"fmt"
	"testing"

	"leaselab/engine"
)

// TestParallelAgrees: a search on two databases at once comes to the result of the search on one:
// the same figures, the same proof, the same schedule found.
func TestParallelAgrees(t *testing.T) {
	for _, c := range []struct {
		name    string
		toggles map[string]bool
		depth   int
	}{
		{"playground", nil, 6},
		{"playground", map[string]bool{engine.ToggleAtomicClaim: false}, 10},
		{"aba-fencing", map[string]bool{engine.ToggleFencing: false}, 10},
		{"rescuer-race", map[string]bool{engine.ToggleGuardedRescue: false}, 10},
	} {
		sc := lesson(t, c.name, c.toggles)
		b := DefaultBounds()
		b.Depth = c.depth
		one := searchWith(t, sc, b, nil)
		two := searchWith(t, sc, b, func(cfg *Config) { cfg.MoreDBs = append(cfg.MoreDBs, newDB(t, t.TempDir())) })
		if a, b := figures(one), figures(two); a != b {
			t.Errorf("%s %v:\none database:  %s\ntwo databases: %s", c.name, c.toggles, a, b)
		}
	}
}

// figures are what must not depend on how many databases the search ran on.
func figures(r *Result) string {
	s := fmt.Sprintf("%d states, %d moves, %d distinct, %d seen before, %d pruned, depth %d, exhausted %t, by depth %v, broken %v",
		r.States, r.Moves, r.Distinct, r.SeenBefore, r.Pruned, r.Depth, r.Exhausted, r.ByDepth, r.Broken)
	if r.Violation != nil {
		s += "; found " + schedule(r.Violation)
	}
	return s
}
