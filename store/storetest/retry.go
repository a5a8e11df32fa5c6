package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"leaselab/engine"
)

// The rest of a message's life (package retry): a failed attempt, its backoff, the dead letter,
// the redrive and the rescue, on every backend whose connections offer them.

// retryConn is a worker connection from schema 4: an engine.Conn (with Fail and ClaimDue) that a
// rescuer can sweep with too.
type retryConn interface {
	engine.Conn
	engine.RescueConn
}

// retrier connects a worker whose connection offers retryConn; a backend without skips.
func retrier(t *testing.T, db engine.DB) retryConn {
	t.Helper()
	return connectAs[retryConn](t, db, "skipped: this backend's connections have no failures, backoff or rescue")
}

// stateOf reads key's engine.RetryState; a backend that cannot read it skips.
func stateOf(t *testing.T, db engine.DB, key string) engine.RetryState {
	t.Helper()
	r := db.Capabilities().Retry
	if r == nil {
		t.Skip("skipped: this backend cannot read a message's retry state")
	}
	st, err := r.RetryState(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// mustClaimDue is a due claim at now with a one-second lease that must be won.
func mustClaimDue(t *testing.T, c retryConn, worker string, now time.Time) engine.Message {
	t.Helper()
	res, err := c.ClaimDue(context.Background(), claimAt(worker, now, time.Second))
	if err != nil || res.Outcome != engine.ClaimWon {
		t.Fatalf("due claim by %s at %s: %+v, %v; want won", worker, now.Format("15:04:05.000"), res, err)
	}
	return res.Message
}

// failed is worker's report that its attempt at m failed at now, retried at next.
func failed(worker string, m engine.Message, now, next time.Time, max int64) engine.FailRequest {
	return engine.FailRequest{Worker: worker, Message: m, Now: now, NextAttempt: next, Error: "provider timeout", MaxAttempts: max}
}

// A failed attempt releases the lease to Pending with its error and its next attempt; the due
// claim passes it over until then (and says it waits), then takes it under a new version.
func testFailReleasesWithBackoff(t *testing.T, b Backend) {
	db := seeded(t, b, 2)
	a, w := retrier(t, db), retrier(t, db)
	ctx := context.Background()
	m := mustClaimDue(t, a, "Worker-A", t0)
	next := t0.Add(500 * time.Millisecond)
	res, err := a.Fail(ctx, failed("Worker-A", m, t0.Add(100*time.Millisecond), next, 3))
	if err != nil || !res.Released || res.DeadLettered || res.Attempts != 1 {
		t.Fatalf("fail = %+v, %v; want released to Pending after 1 attempt", res, err)
	}
	want := engine.RetryState{Status: engine.StatusPending, Attempts: 1, NextAttempt: next, LastError: "provider timeout"}
	if st := stateOf(t, db, m.IdempotencyKey); st != want {
		t.Fatalf("state = %+v, want %+v", st, want)
	}
	if r := RowByKey(t, db, m.IdempotencyKey); r.Status != engine.StatusPending || !r.LockedUntil.IsZero() {
		t.Fatalf("row = %+v, want Pending with no lease", r)
	}
	if got := mustClaimDue(t, w, "Worker-B", t0.Add(200*time.Millisecond)); got.IdempotencyKey != "PAY-002" {
		t.Fatalf("due claim in PAY-001's backoff took %s, want PAY-002", got.IdempotencyKey)
	}
	res2, err := w.ClaimDue(ctx, claimAt("Worker-B", t0.Add(300*time.Millisecond), time.Second))
	if err != nil || res2.Outcome != engine.ClaimBlocked || res2.Blocker != "PAY-001" || res2.PrevOwner != "" || !res2.PrevUntil.Equal(next) {
		t.Fatalf("due claim with PAY-001 waiting and PAY-002 leased = %+v, %v; want blocked by PAY-001's backoff until %v", res2, err, next)
	}
	again := mustClaimDue(t, w, "Worker-B", next)
	if again.IdempotencyKey != "PAY-001" || again.LeaseVersion != 2 {
		t.Fatalf("due claim at the next attempt = %+v, want PAY-001 under version 2", again)
	}
	if _, err := w.ClaimDue(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: t0, Until: t0.Add(time.Second), Key: "PAY-001"}); err == nil {
		t.Fatal("keyed due claim: want an error")
	}
}

// A failed attempt is guarded as a fenced finalize: a stranger's, or a stale version's after a
// reclaim, changes nothing.
func testFailIsGuarded(t *testing.T, b Backend) {
	db := seeded(t, b, 1)
	a, w := retrier(t, db), retrier(t, db)
	ctx := context.Background()
	m := mustClaimDue(t, a, "Worker-A", t0)
	if res, err := w.Fail(ctx, failed("Worker-B", m, t0, time.Time{}, 0)); err != nil || res.Released {
		t.Fatalf("stranger's fail = %+v, %v; want refused", res, err)
	}
	later := t0.Add(2 * time.Second)
	taken := mustClaimDue(t, w, "Worker-B", later)
	if res, err := a.Fail(ctx, failed("Worker-A", m, later, time.Time{}, 0)); err != nil || res.Released {
		t.Fatalf("stale fail after the reclaim = %+v, %v; want refused", res, err)
	}
	if r := RowByKey(t, db, "PAY-001"); r.Status != engine.StatusProcessing || r.LockedBy != "Worker-B" || r.LeaseVersion != taken.LeaseVersion {
		t.Fatalf("row = %+v, want Worker-B's lease untouched", r)
	}
	if st := stateOf(t, db, "PAY-001"); st.LastError != "" || !st.NextAttempt.IsZero() {
		t.Fatalf("state = %+v, want no error recorded", st)
	}
}

// The attempt that reaches the maximum parks the message: DeadLettered, finished, never claimed
// again by either claim, with its error and its attempts.
func testFailDeadLettersAtMax(t *testing.T, b Backend) {
	db := seeded(t, b, 1)
	a := retrier(t, db)
	ctx := context.Background()
	m := mustClaimDue(t, a, "Worker-A", t0)
	if res, err := a.Fail(ctx, failed("Worker-A", m, t0, time.Time{}, 2)); err != nil || !res.Released || res.DeadLettered {
		t.Fatalf("first fail = %+v, %v; want released, not dead-lettered", res, err)
	}
	m = mustClaimDue(t, a, "Worker-A", t0) // no backoff: due at once
	res, err := a.Fail(ctx, failed("Worker-A", m, t0.Add(time.Millisecond), t0.Add(time.Minute), 2))
	if err != nil || !res.Released || !res.DeadLettered || res.Attempts != 2 {
		t.Fatalf("second fail = %+v, %v; want dead-lettered after 2 attempts", res, err)
	}
	want := engine.RetryState{Status: engine.StatusDeadLettered, Attempts: 2, LastError: "provider timeout"}
	if st := stateOf(t, db, "PAY-001"); st != want {
		t.Fatalf("state = %+v, want %+v", st, want)
	}
	if r := RowByKey(t, db, "PAY-001"); !r.ProcessedAt.Equal(t0.Add(time.Millisecond)) || !r.LockedUntil.IsZero() {
		t.Fatalf("row = %+v, want parked at the failure, no lease", r)
	}
	later := t0.Add(time.Hour)
	for name, claim := range map[string]func(context.Context, engine.ClaimRequest) (engine.ClaimResult, error){"due": a.ClaimDue, "plain": a.Claim} {
		if res, err := claim(ctx, claimAt("Worker-A", later, time.Second)); err != nil || res.Outcome != engine.ClaimEmpty {
			t.Fatalf("%s claim with only a dead letter = %+v, %v; want empty", name, res, err)
		}
	}
}

// A redrive moves a dead letter back to Pending, claimable at once, attempts reset, its lease
// version going on; anything else is refused and unchanged.
func testRedriveOnlyDeadLetters(t *testing.T, b Backend) {
	db := seeded(t, b, 2)
	r := db.Capabilities().Redrive
	if r == nil {
		t.Skip("skipped: this backend cannot redrive")
	}
	a := retrier(t, db)
	ctx := context.Background()
	if err := r.Redrive(ctx, "PAY-001"); !errors.Is(err, engine.ErrNotDeadLettered) {
		t.Fatalf("redrive of a Pending message = %v, want ErrNotDeadLettered", err)
	}
	if err := r.Redrive(ctx, "PAY-999"); err == nil || errors.Is(err, engine.ErrNotDeadLettered) {
		t.Fatalf("redrive of no message = %v, want an error that says so", err)
	}
	m := mustClaimDue(t, a, "Worker-A", t0)
	if err := r.Redrive(ctx, "PAY-001"); !errors.Is(err, engine.ErrNotDeadLettered) {
		t.Fatalf("redrive of a Processing message = %v, want ErrNotDeadLettered", err)
	}
	if res, err := a.Fail(ctx, failed("Worker-A", m, t0, t0.Add(time.Minute), 1)); err != nil || !res.DeadLettered {
		t.Fatalf("fail = %+v, %v; want dead-lettered", res, err)
	}
	if err := r.Redrive(ctx, "PAY-001"); err != nil {
		t.Fatalf("redrive of a dead letter = %v", err)
	}
	want := engine.RetryState{Status: engine.StatusPending, LastError: "provider timeout"}
	if st := stateOf(t, db, "PAY-001"); st != want {
		t.Fatalf("state after the redrive = %+v, want %+v", st, want)
	}
	if row := RowByKey(t, db, "PAY-001"); !row.ProcessedAt.IsZero() {
		t.Fatalf("row after the redrive = %+v, want unfinished", row)
	}
	if got := mustClaimDue(t, a, "Worker-A", t0); got.IdempotencyKey != "PAY-001" || got.LeaseVersion != 2 {
		t.Fatalf("due claim after the redrive = %+v, want PAY-001 under version 2", got)
	}
	if err := r.Redrive(ctx, "PAY-001"); !errors.Is(err, engine.ErrNotDeadLettered) {
		t.Fatalf("second redrive = %v, want ErrNotDeadLettered", err)
	}
}

// The rescuer reads an expired lease, its owner finalizes late, then the rescuer writes: guarded
// (owner and lease version checked again) it changes nothing; unguarded it sets the Processed
// row back to Pending and it is processed again (River #1302). A lease still expired is
// rescued either way.
func testRescueGuardedAndNot(t *testing.T, b Backend) {
	for _, guarded := range []bool{true, false} {
		db := seeded(t, b, 2)
		a, r := retrier(t, db), retrier(t, db)
		ctx := context.Background()
		m1 := mustClaimDue(t, a, "Worker-A", t0)
		mustClaimDue(t, a, "Worker-A", t0)
		later := t0.Add(2 * time.Second)
		seen, err := r.Expired(ctx, later)
		if err != nil || len(seen) != 2 || seen[0].IdempotencyKey != "PAY-001" || seen[0].LockedBy != "Worker-A" ||
			seen[0].LeaseVersion != 1 || !seen[0].LockedUntil.Equal(t0.Add(time.Second)) {
			t.Fatalf("expired at %v = %+v, %v; want PAY-001 and PAY-002, Worker-A's, version 1", later, seen, err)
		}
		if res, err := a.Finalize(ctx, paid("Worker-A", m1)); err != nil || !res.Committed {
			t.Fatalf("late finalize = %+v, %v", res, err)
		}
		res, err := r.Rescue(ctx, engine.RescueRequest{Seen: seen[0], Now: later, Guarded: guarded})
		if err != nil || res.Rescued == guarded {
			t.Fatalf("rescue (guarded %v) after the finalize = %+v, %v; want rescued %v", guarded, res, err, !guarded)
		}
		row := RowByKey(t, db, "PAY-001")
		if guarded && row.Status != engine.StatusProcessed || !guarded && (row.Status != engine.StatusPending || !row.ProcessedAt.IsZero()) {
			t.Fatalf("guarded %v: PAY-001 after the rescue = %+v", guarded, row)
		}
		if res, err := r.Rescue(ctx, engine.RescueRequest{Seen: seen[1], Now: later, Guarded: guarded}); err != nil || !res.Rescued {
			t.Fatalf("rescue (guarded %v) of a lease still expired = %+v, %v; want rescued", guarded, res, err)
		}
		if row := RowByKey(t, db, "PAY-002"); row.Status != engine.StatusPending || !row.LockedUntil.IsZero() {
			t.Fatalf("PAY-002 after its rescue = %+v, want Pending", row)
		}
	}
}

// A guarded rescue of a lease that was reclaimed since the rescuer read it changes nothing,
// even when the new lease has ended too: the owner and the version are not what it saw.
func testGuardedRescueAfterReclaim(t *testing.T, b Backend) {
	db := seeded(t, b, 1)
	a, w, r := retrier(t, db), retrier(t, db), retrier(t, db)
	ctx := context.Background()
	mustClaimDue(t, a, "Worker-A", t0)
	seen, err := r.Expired(ctx, t0.Add(2*time.Second))
	if err != nil || len(seen) != 1 {
		t.Fatal(seen, err)
	}
	mustClaimDue(t, w, "Worker-B", t0.Add(2*time.Second))
	res, err := r.Rescue(ctx, engine.RescueRequest{Seen: seen[0], Now: t0.Add(4 * time.Second), Guarded: true})
	if err != nil || res.Rescued {
		t.Fatalf("guarded rescue of a reclaimed lease = %+v, %v; want refused", res, err)
	}
	if row := RowByKey(t, db, "PAY-001"); row.Status != engine.StatusProcessing || row.LockedBy != "Worker-B" {
		t.Fatalf("row = %+v, want Worker-B's lease", row)
	}
}
