package explore

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/store"
	"leaselab/store/storetest"
)

// lesson parses a built-in scenario with toggles set.
func lesson(t testing.TB, name string, toggles map[string]bool) *engine.Scenario {
	t.Helper()
	data, src, ok := assets.Scenario(name)
	if !ok {
		t.Fatalf("no scenario %s", name)
	}
	sc, err := scenario.Parse(src, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Apply(engine.Overrides{Toggles: toggles}); err != nil {
		t.Fatal(err)
	}
	return sc
}

// newDB is a fresh database file in dir, closed when the test ends.
func newDB(t testing.TB, dir string) *store.DB {
	t.Helper()
	db, err := store.Create(context.Background(), filepath.Join(dir, "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// search explores sc on a fresh database file.
func search(t testing.TB, sc *engine.Scenario, b Bounds, how Restore) *Result {
	t.Helper()
	dir := t.TempDir()
	db := newDB(t, dir)
	res, err := Run(context.Background(), Config{Scenario: sc, DB: db, Bounds: b, Restore: how, TempDir: dir, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func schedule(v *Violation) string {
	var s []string
	for _, t := range v.Schedule {
		s = append(s, t.String())
	}
	return strings.Join(s, "; ")
}

func TestNaiveClaimFound(t *testing.T) {
	sc := lesson(t, "playground", map[string]bool{engine.ToggleAtomicClaim: false})
	res := search(t, sc, DefaultBounds(), RestoreMemory)
	if res.Violation == nil {
		t.Fatalf("no violation: %+v", res.Stats)
	}
	t.Logf("%s: %v after %d states (%d distinct) %+v", schedule(res.Violation), failedIDs(res.Violation), res.States, res.Distinct, res.Stats)
	if !slices.Contains(failedIDs(res.Violation), engine.CheckOneOwner) {
		t.Errorf("failed %v, want one-owner", failedIDs(res.Violation))
	}
}

// TestInterruptKeepsWhatWasExplored: a context that ends mid-search returns the figures so far,
// cut "interrupted", with no error.
func TestInterruptKeepsWhatWasExplored(t *testing.T) {
	sc := lesson(t, "playground", nil)
	db, err := store.Create(context.Background(), filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	res, err := Run(ctx, Config{Scenario: sc, DB: db, Bounds: DefaultBounds(), Now: time.Now, ProgressEvery: time.Nanosecond,
		Progress: func(st Stats) {
			if calls++; calls == 50 {
				cancel()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cut != "interrupted" || res.States < 40 || res.Violation != nil {
		t.Errorf("cut %q after %d states, violation %v: want interrupted with the states so far", res.Cut, res.States, res.Violation)
	}
}

// TestRestoresAgree: every way of restoring a state explores the same states.
func TestRestoresAgree(t *testing.T) {
	sc := lesson(t, "playground", nil)
	b := DefaultBounds()
	b.Depth = 5
	var first *Result
	for _, how := range []Restore{RestoreRows, RestoreMemory, RestoreFile, RestoreReplay} {
		res := search(t, sc, b, how)
		t.Logf("%s: %d states (%d distinct, %d pruned)", how, res.States, res.Distinct, res.SeenBefore)
		if first == nil {
			first = res
			continue
		}
		if res.States != first.States || res.Distinct != first.Distinct || res.SeenBefore != first.SeenBefore {
			t.Errorf("%s: %d states (%d distinct, %d pruned); rows: %d (%d, %d)", how, res.States, res.Distinct, res.SeenBefore,
				first.States, first.Distinct, first.SeenBefore)
		}
	}
}

// TestStateKeyHoldsNextAttempt: two states whose rows differ only in a message's NextAttemptUtc
// (engine.Row does not hold it, and a claim that honours the backoff reads it) have different
// state keys and different database keys, so the search neither merges them nor restores one's
// copy for the other.
func TestStateKeyHoldsNextAttempt(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	db, path := newDB(t, dir), filepath.Join(dir, "x.db")
	s, err := engine.NewSessionWith(ctx, lesson(t, "playground", nil), db, engine.SessionOptions{Seed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	read := func() ([]engine.Row, []engine.RetryState) {
		t.Helper()
		rows, err := db.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		retry, err := db.RetryStates(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(retry) != len(rows) || len(rows) == 0 {
			t.Fatalf("%d retry states for %d rows", len(retry), len(rows))
		}
		return rows, retry
	}
	rows1, retry1 := read()
	storetest.ExecFile(t, path, `UPDATE OutboxMessages SET NextAttemptUtc = '2026-01-15T09:00:05.000Z' WHERE Id = (SELECT min(Id) FROM OutboxMessages)`)
	rows2, retry2 := read()
	if rows2[0].NextAttempt.IsZero() {
		t.Fatal("the snapshot does not read NextAttemptUtc")
	}
	// The snapshot reads NextAttemptUtc too (the lab shows it): apart from it, the rows agree.
	apart := slices.Clone(rows2)
	apart[0].NextAttempt = time.Time{}
	if !slices.Equal(rows1, apart) {
		t.Fatal("the rows differ in more than NextAttemptUtc")
	}
	if retry2[0].NextAttempt.IsZero() || !retry1[0].NextAttempt.IsZero() {
		t.Fatalf("RetryStates read NextAttempt %v then %v, want none then one", retry1[0].NextAttempt, retry2[0].NextAttempt)
	}
	if stateKey(rows1, retry1, s.Probe(), nil, new(bytes.Buffer)) == stateKey(rows2, retry2, s.Probe(), nil, new(bytes.Buffer)) {
		t.Error("two states differing only in NextAttemptUtc have one state key")
	}
	if dbKeyOf(rows1, retry1) == dbKeyOf(rows2, retry2) {
		t.Error("two databases differing only in NextAttemptUtc have one key")
	}
	// And LastError.
	storetest.ExecFile(t, path, `UPDATE OutboxMessages SET LastError = 'provider: 503' WHERE Id = (SELECT min(Id) FROM OutboxMessages)`)
	rows3, retry3 := read()
	if !slices.Equal(rows2, rows3) || stateKey(rows2, retry2, s.Probe(), nil, new(bytes.Buffer)) == stateKey(rows3, retry3, s.Probe(), nil, new(bytes.Buffer)) {
		t.Error("two states differing only in LastError have one state key")
	}
}

// TestStateKeyHoldsTheBudgetSpent: one state reached with a crash (or a clock move, a pause)
// spent and reached without it are two states: the second may still crash, so merging them
// would leave its schedules unsearched and let the bounded proof claim them. Keys differ for
// each part of the budget, and the playground to depth 7 (every guard on, 1 crash, 2 clock
// moves) explores more distinct states than it did when the key left the budget out (1,325).
func TestStateKeyHoldsTheBudgetSpent(t *testing.T) {
	key := [2]uint64{1, 2}
	seen := map[[2]uint64]used{}
	for _, u := range []used{{}, {crashes: 1}, {clockMoves: 1}, {pauses: 1}, {crashes: 1, clockMoves: 2}} {
		k := withUsed(key, u)
		if was, ok := seen[k]; ok {
			t.Errorf("budgets %+v and %+v have one key", was, u)
		}
		seen[k] = u
	}
	if withUsed(key, used{crashes: 1}) != withUsed(key, used{crashes: 1}) {
		t.Error("one budget, two keys")
	}
	b := DefaultBounds()
	b.Depth = 7
	res := searchWith(t, lesson(t, "playground", nil), b, func(c *Config) { c.NoSymmetry, c.NoSleepSets = true, true })
	if res.Violation != nil || res.Distinct <= 1325 {
		t.Errorf("depth 7: %d distinct (violation %v); want more than the 1,325 of a key without the budget", res.Distinct, res.Violation)
	}
}
