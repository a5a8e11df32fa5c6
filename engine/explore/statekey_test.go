package explore

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"leaselab/engine"
	"leaselab/store"
	"leaselab/store/storetest"
)

// TestStateKeyHoldsNextAttempt: two states whose rows differ only in a message's NextAttemptUtc
// (engine.Row does not hold it, and a claim that honours the backoff reads it) have different
// state keys and different database keys, so the search neither merges them nor restores one's
// copy for the other.
func TestStateKeyHoldsNextAttempt(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := store.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
	if !slices.Equal(rows1, rows2) {
		t.Fatal("the rows differ in more than NextAttemptUtc")
	}
	if retry2[0].NextAttempt.IsZero() || !retry1[0].NextAttempt.IsZero() {
		t.Fatalf("RetryStates read NextAttempt %v then %v, want none then one", retry1[0].NextAttempt, retry2[0].NextAttempt)
	}
	if stateKey(rows1, retry1, s) == stateKey(rows2, retry2, s) {
		t.Error("two states differing only in NextAttemptUtc have one state key")
	}
	if dbKeyOf(rows1, retry1) == dbKeyOf(rows2, retry2) {
		t.Error("two databases differing only in NextAttemptUtc have one key")
	}
	// And LastError.
	storetest.ExecFile(t, path, `UPDATE OutboxMessages SET LastError = 'provider: 503' WHERE Id = (SELECT min(Id) FROM OutboxMessages)`)
	rows3, retry3 := read()
	if !slices.Equal(rows2, rows3) || stateKey(rows2, retry2, s) == stateKey(rows3, retry3, s) {
		t.Error("two states differing only in LastError have one state key")
	}
}
