package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"leaselab/engine"
	"leaselab/store/storetest"
)

// claimReq is a claim at t0 with a one-second lease; wait makes it wait for row locks.
func claimReq(worker string, wait bool) engine.ClaimRequest {
	return engine.ClaimRequest{Worker: worker, Now: t0, Until: t0.Add(time.Second), WaitForLocks: wait, LockTimeout: 150 * time.Millisecond}
}

// rowLocker connects a worker whose connection can claim in two steps.
func rowLocker(t *testing.T, db engine.DB) engine.RowLocker {
	t.Helper()
	rl, ok := storetest.Connect(t, db).(engine.RowLocker)
	if !ok {
		t.Fatal("a PostgreSQL connection is not an engine.RowLocker")
	}
	return rl
}

// The two-step claim: the lock step writes nothing (the row reads Pending to everyone), a
// claim that skips locked rows takes the next one at once, one that waits gives up after its
// lock_timeout as blocked, with the wait measured and the holder named; the finish step's
// UPDATE and COMMIT make the lease visible.
func TestTwoStepClaimAndTheClaimsThatMeetIt(t *testing.T) {
	db := seededDB(t, 3)
	ctx := context.Background()
	a := rowLocker(t, db)
	res, err := a.LockClaim(ctx, claimReq("Worker-A", false))
	if err != nil || res.Outcome != engine.ClaimWon || res.Message.IdempotencyKey != "PAY-001" || res.Message.LeaseVersion != 0 {
		t.Fatalf("lock = %+v, %v; want PAY-001 locked at version 0", res, err)
	}
	if rows, _ := db.Snapshot(ctx); rows[0].Status != engine.StatusPending || rows[0].LockedBy != "" {
		t.Fatalf("after the lock step PAY-001 reads %s, LockedBy %q; want Pending, none", rows[0].Status, rows[0].LockedBy)
	}

	b := rowLocker(t, db).(engine.Conn)
	start := time.Now()
	waited, err := b.Claim(ctx, claimReq("Worker-B", true))
	took := time.Since(start)
	if err != nil || waited.Outcome != engine.ClaimBlocked || waited.Blocker != "PAY-001" || waited.LockHolder != "Worker-A" {
		t.Fatalf("waiting claim = %+v, %v; want blocked on PAY-001, held by Worker-A", waited, err)
	}
	if waited.LockWait < 140*time.Millisecond || waited.LockWait > took {
		t.Fatalf("lock wait %v (call took %v); want about the 150ms lock_timeout", waited.LockWait, took)
	}
	skipped, err := b.Claim(ctx, claimReq("Worker-B", false))
	if err != nil || skipped.Outcome != engine.ClaimWon || skipped.Message.IdempotencyKey != "PAY-002" || skipped.LockWait != 0 {
		t.Fatalf("skipping claim = %+v, %v; want PAY-002 at once", skipped, err)
	}

	fin, err := a.FinishClaim(ctx, claimReq("Worker-A", false))
	if err != nil || fin.Outcome != engine.ClaimWon || fin.Message.LeaseVersion != 1 || !fin.Message.LockedUntil.Equal(t0.Add(time.Second)) {
		t.Fatalf("finish = %+v, %v; want PAY-001 won, v1 until t0+1s", fin, err)
	}
	if rows, _ := db.Snapshot(ctx); rows[0].Status != engine.StatusProcessing || rows[0].LockedBy != "Worker-A" {
		t.Fatalf("after the finish PAY-001 reads %s, %q; want Processing, Worker-A", rows[0].Status, rows[0].LockedBy)
	}
	if _, err := a.FinishClaim(ctx, claimReq("Worker-A", false)); err == nil {
		t.Fatal("a second finish with no claim open succeeded")
	}
}

// A worker that crashes inside its open claim transaction loses nothing and holds nothing: the
// server rolls the transaction back, and a waiting claim gets the row.
func TestCrashInsideTheClaimReleasesTheLock(t *testing.T) {
	db := seededDB(t, 1)
	ctx := context.Background()
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.(engine.RowLocker).LockClaim(ctx, claimReq("Worker-A", false)); err != nil || res.Outcome != engine.ClaimWon {
		t.Fatalf("lock = %+v, %v", res, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b := rowLocker(t, db).(engine.Conn)
	res, err := b.Claim(ctx, claimReq("Worker-B", true))
	if err != nil || res.Outcome != engine.ClaimWon || res.Message.IdempotencyKey != "PAY-001" || res.Message.LeaseVersion != 1 {
		t.Fatalf("claim after the crash = %+v, %v; want PAY-001, v1", res, err)
	}
}

// A waiting claim whose row is taken while it waits (the holder commits its claim) takes the
// next claimable row once the lock is released, and reports the wait, the row it waited for and
// whose transaction held it.
func TestWaitingClaimTakesTheNextRowAfterTheWait(t *testing.T) {
	db := seededDB(t, 2)
	ctx := context.Background()
	a := rowLocker(t, db)
	if _, err := a.LockClaim(ctx, claimReq("Worker-A", false)); err != nil {
		t.Fatal(err)
	}
	b := rowLocker(t, db).(engine.Conn)
	done := make(chan engine.ClaimResult, 1)
	errs := make(chan error, 1)
	go func() {
		req := claimReq("Worker-B", true)
		req.LockTimeout = 10 * time.Second
		res, err := b.Claim(ctx, req)
		done <- res
		errs <- err
	}()
	// B waits for PAY-001 (the server says so), and waits a while: on a loaded machine a fixed
	// sleep could end before B even asked.
	waitForApp(t, rawConn(t, db), "Worker-B")
	time.Sleep(60 * time.Millisecond)
	if _, err := a.FinishClaim(ctx, claimReq("Worker-A", false)); err != nil {
		t.Fatal(err)
	}
	var res engine.ClaimResult
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting claim did not return after the holder committed")
	}
	if err := <-errs; err != nil || errors.Is(err, engine.ErrBusy) {
		t.Fatal(err)
	}
	if res.Outcome != engine.ClaimWon || res.Message.IdempotencyKey != "PAY-002" || res.LockWait < 50*time.Millisecond ||
		res.WaitedFor != "PAY-001" || res.LockHolder != "Worker-A" {
		t.Fatalf("waiting claim = %+v; want PAY-002 won after waiting for PAY-001, held by Worker-A", res)
	}
	// Nothing locked: the waiting claim does not wait, and says so.
	if next, err := b.Claim(ctx, claimReq("Worker-B", true)); err != nil || next.Outcome != engine.ClaimBlocked || next.LockWait != 0 {
		t.Fatalf("claim with every row leased = %+v, %v; want blocked at once", next, err)
	}
}

// waitForApp waits until the connection named app (application_name) waits for a lock.
func waitForApp(t *testing.T, probe *pgx.Conn, app string) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var n int
		err := probe.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatalf("%s never waited for a lock", app)
}

// Issue 18's livelock: with the atomic claim off, Worker-B's take (the unconditional UPDATE of
// the row its plain SELECT picked) met Worker-A's open claim's row lock, waited out the
// connection's 10 s lock_timeout, failed busy, and was retried for ever, since the step that
// ends Worker-A's transaction comes after it. The take is now bounded as a claim is: with
// skip-locked on it does not wait, off it waits up to the claim's lock timeout; either way it
// takes nothing (Blocked) and writes nothing. Once the lock is gone, the take takes the row.
func TestTakeMeetsARowLockAndGivesUp(t *testing.T) {
	db := seededDB(t, 2)
	ctx := context.Background()
	a := rowLocker(t, db)
	if res, err := a.LockClaim(ctx, claimReq("Worker-A", false)); err != nil || res.Message.IdempotencyKey != "PAY-001" {
		t.Fatalf("lock = %+v, %v; want PAY-001 locked", res, err)
	}
	b := storetest.Connect(t, db)
	m, ok, err := b.SelectCandidate(ctx, t0)
	if err != nil || !ok || m.IdempotencyKey != "PAY-001" {
		t.Fatalf("select = %+v %v %v; want PAY-001 (a plain read does not see the lock)", m, ok, err)
	}
	take := func(wait bool) engine.TakeRequest {
		return engine.TakeRequest{ID: m.ID, Worker: "Worker-B", WaitForLocks: wait, LockTimeout: 150 * time.Millisecond,
			LeaseTimes: engine.LeaseTimes{Now: t0, Until: t0.Add(time.Second)}}
	}
	for _, wait := range []bool{false, true} {
		start := time.Now()
		res, err := b.TakeUnconditional(ctx, take(wait))
		took := time.Since(start)
		if err != nil || !res.Blocked || took > 5*time.Second {
			t.Fatalf("take (wait %v) = %+v, %v after %v; want Blocked, at once or after the 150ms lock timeout", wait, res, err, took)
		}
		if wait != (res.LockWait >= 140*time.Millisecond) || res.LockWait > took {
			t.Fatalf("take (wait %v): lock wait %v (call took %v)", wait, res.LockWait, took)
		}
	}
	if rows, _ := db.Snapshot(ctx); rows[0].Status != engine.StatusPending || rows[0].LeaseVersion != 0 {
		t.Fatalf("after the blocked takes PAY-001 is %+v; want it untouched", rows[0])
	}
	if _, err := a.FinishClaim(ctx, claimReq("Worker-A", false)); err != nil {
		t.Fatal(err)
	}
	if res, err := b.TakeUnconditional(ctx, take(false)); err != nil || res.Blocked || res.Message.LeaseVersion != 2 {
		t.Fatalf("take after the lock's commit = %+v, %v; want it taken (version 2, over Worker-A's lease)", res, err)
	}
}
