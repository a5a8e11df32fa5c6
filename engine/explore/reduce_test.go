package explore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"leaselab/assets"
	"leaselab/engine"
)

// agreementDepth is each lesson's depth in TestReductionsAgree: deep enough for the guard-off
// violations the lesson teaches (docs/explore.md's table), small enough for the test to stay
// cheap. LEASELAB_EXPLORE_DEEP=1 adds two moves to each.
var agreementDepth = map[string]int{
	"playground": 6, "aba-fencing": 5, "rescuer-race": 6, "clock-skew": 3, "stale-owner": 3, "naive-claim": 4,
	"before": 3, "after": 3, "lease-too-short": 3, "dead-letter": 2, "retry-backoff": 2, "many-workers": 2,
}

// lessonToggles are the toggles a lesson's search can turn: the lab's, and those of its group
// the run uses (the rescuer's, the retries'); none that only a database with row locks has.
func lessonToggles(t testing.TB, sc *engine.Scenario) []engine.Toggle {
	t.Helper()
	db := newDB(t, t.TempDir())
	s, err := engine.NewSessionWith(context.Background(), sc, db, engine.SessionOptions{Seed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []engine.Toggle
	for _, tg := range engine.Registry() {
		if !tg.RowLocks && (tg.Where == engine.InLab || s.Probe().UsesToggle(tg)) {
			out = append(out, tg)
		}
	}
	return out
}

// verdict is what a search concluded, for comparing two: the violation's length and the checks
// broken at that depth, or the depth proved and whether the states ran out.
func verdict(r *Result) string {
	if r.Violation != nil {
		return fmt.Sprintf("violation of %d moves breaking %v", len(r.Violation.Schedule), r.Broken)
	}
	return fmt.Sprintf("proof to depth %d (exhausted %t, cut %q)", r.Depth, r.Exhausted, r.Cut)
}

// TestReductionsAgree: on every built-in lesson (PostgreSQL's own, skip-locked, aside), with each
// of its guards off and on, the reduced search (symmetry and sleep sets) and the full one
// (--no-reduce) conclude the same: a violation of the same shortest length breaking the same
// checks at that depth, or the same proof. It logs the states each explored.
func TestReductionsAgree(t *testing.T) {
	deep := os.Getenv("LEASELAB_EXPLORE_DEEP") != ""
	var full, reduced int
	done := map[string]bool{} // a lesson's settings already searched (a guard set as it was)
	for _, name := range assets.Names() {
		depth, ok := agreementDepth[name]
		if !ok {
			continue
		}
		if deep {
			depth += 2
		}
		base := lesson(t, name, nil)
		if base.Backend != "" {
			continue
		}
		for _, tg := range lessonToggles(t, base) {
			for _, on := range []bool{false, true} {
				sc := lesson(t, name, map[string]bool{tg.Name: on})
				if name == "many-workers" {
					// Its eight workers over 16 of its 500 messages: a state of 500 rows costs 30 times
					// one of 16 to read, and two moves reach no more of them.
					if err := sc.Apply(engine.Overrides{Messages: 16}); err != nil {
						t.Fatal(err)
					}
				}
				if k := fmt.Sprintf("%s %+v", name, sc.Settings); done[k] {
					continue
				} else {
					done[k] = true
				}
				b := DefaultBounds()
				b.Depth = depth
				f := searchWith(t, sc, b, func(c *Config) { c.NoSymmetry, c.NoSleepSets = true, true })
				r := searchWith(t, sc, b, nil)
				full, reduced = full+f.States, reduced+r.States
				t.Logf("%s %s=%t depth %d: full %d states (%d moves, %v), reduced %d states (%d moves, %d pruned, %v): %s", name, tg.Name, on,
					depth, f.States, f.Moves, f.Elapsed.Round(time.Millisecond), r.States, r.Moves, r.Pruned, r.Elapsed.Round(time.Millisecond), verdict(f))
				if verdict(f) != verdict(r) {
					t.Errorf("%s %s=%t: full search: %s; reduced: %s", name, tg.Name, on, verdict(f), verdict(r))
				}
				for _, res := range []*Result{f, r} {
					if res.States != res.Distinct+res.SeenBefore+res.Pruned+res.Unstored {
						t.Errorf("%s %s=%t: %d states ≠ %d distinct + %d seen before + %d pruned + %d unstored", name, tg.Name, on,
							res.States, res.Distinct, res.SeenBefore, res.Pruned, res.Unstored)
					}
				}
			}
		}
	}
	t.Logf("in all: full %d states, reduced %d", full, reduced)
}

// TestIndependentMovesCommute: every pair of moves the sleep sets treat as commuting, made in both
// orders from each state of a few lessons' searches, ends in one state.
func TestIndependentMovesCommute(t *testing.T) {
	for _, c := range []struct {
		name    string
		toggles map[string]bool
		depth   int
	}{
		{"playground", nil, 6},
		{"playground", map[string]bool{engine.ToggleAtomicClaim: false}, 5},
		{"playground", map[string]bool{engine.ToggleLeasing: false}, 4},
		{"aba-fencing", nil, 5},
		{"retry-backoff", nil, 3},
	} {
		b := DefaultBounds()
		b.Depth = c.depth
		res := searchWith(t, lesson(t, c.name, c.toggles), b, func(cfg *Config) { cfg.verifyCommute = true })
		t.Logf("%s %v: %d states, %d pruned", c.name, c.toggles, res.States, res.Pruned)
	}
}

// searchWith explores sc on a fresh database file, with the config changed by set.
func searchWith(t testing.TB, sc *engine.Scenario, b Bounds, set func(*Config)) *Result {
	t.Helper()
	dir := t.TempDir()
	cfg := Config{Scenario: sc, DB: newDB(t, dir), Bounds: b, TempDir: dir, Now: time.Now, NoShares: true}
	if set != nil {
		set(&cfg)
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestOneReadAnswersAsTheStatements: at every state of a few searches (the naive claim's, the
// retries' with failed attempts, the rescuer's, a dead letter's), the rows' view, the counts,
// the transaction ids and the retry columns derived from one copy of both tables are what the
// store's own statements read.
func TestOneReadAnswersAsTheStatements(t *testing.T) {
	for _, c := range []struct {
		name    string
		toggles map[string]bool
		depth   int
	}{
		{"playground", map[string]bool{engine.ToggleAtomicClaim: false}, 6},
		{"playground", map[string]bool{engine.ToggleLeasing: false}, 4},
		{"rescuer-race", map[string]bool{engine.ToggleGuardedRescue: false}, 6},
		{"retry-backoff", nil, 3},
		{"dead-letter", nil, 3},
	} {
		b := DefaultBounds()
		b.Depth = c.depth
		searchWith(t, lesson(t, c.name, c.toggles), b, func(cfg *Config) { cfg.verifyReads = true })
	}
}
