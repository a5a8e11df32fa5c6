package storetest

import (
	"context"
	"testing"
	"time"

	"leaselab/engine"
)

// A finalize by a worker that does not own the row changes nothing: the payment update in the
// same transaction is rolled back. Without the check the same finalize goes through.
func testFinalizeByStranger(t *testing.T, b Backend) {
	db := seeded(t, b, 1)
	a, bc := Connect(t, db), Connect(t, db)
	ctx := context.Background()
	won := mustClaim(t, a, claimAt("Worker-A", t0, time.Second))
	before := RowByKey(t, db, "PAY-001")
	req := engine.FinalizeRequest{Worker: "Worker-B", Message: won.Message, Now: t0,
		PaymentStatus: engine.PaymentPaid, TransactionID: "txn_stolen", OwnershipCheck: true}
	res, err := bc.Finalize(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed || res.RowsAffected != 0 || res.PriorOwner != "Worker-A" || res.PriorStatus != engine.StatusProcessing || res.PriorVersion != 1 {
		t.Fatalf("stranger's finalize = %+v, want rolled back with 0 rows, prior Worker-A's v1", res)
	}
	after := RowByKey(t, db, "PAY-001")
	if after != before {
		t.Fatalf("row changed by a rejected finalize:\nbefore %+v\nafter  %+v", before, after)
	}
	if after.PaymentStatus != engine.PaymentPending || after.TransactionID != "" {
		t.Fatalf("payment = %s %q, want Pending with no transaction id (rolled back)", after.PaymentStatus, after.TransactionID)
	}
	req.OwnershipCheck = false
	res, err = bc.Finalize(ctx, req)
	if err != nil || !res.Committed || res.RowsAffected != 1 || res.PriorOwner != "Worker-A" {
		t.Fatalf("unchecked finalize = %+v %v, want committed over Worker-A's lease", res, err)
	}
	if r := RowByKey(t, db, "PAY-001"); r.Status != engine.StatusProcessed || r.TransactionID != "txn_stolen" || !r.LockedUntil.IsZero() {
		t.Fatalf("row after the unchecked finalize = %+v", r)
	}
}

// A finalize under an old lease version is rejected with fencing, and goes through (over the
// new version) without it.
func testFencing(t *testing.T, b Backend) {
	db := seeded(t, b, 1)
	a := Connect(t, db)
	ctx := context.Background()
	first := mustClaim(t, a, claimAt("Worker-A", t0, time.Millisecond))
	later := t0.Add(10 * time.Millisecond)
	second := mustClaim(t, a, claimAt("Worker-A", later, time.Second))
	if second.Message.LeaseVersion != 2 || second.PrevOwner != "Worker-A" {
		t.Fatalf("second claim = %+v, want Worker-A's own reclaim at v2", second)
	}
	req := engine.FinalizeRequest{Worker: "Worker-A", Message: first.Message, Now: later, PaymentStatus: engine.PaymentPaid,
		TransactionID: "t", OwnershipCheck: true, Fencing: true}
	if res, err := a.Finalize(ctx, req); err != nil || res.Committed || res.PriorVersion != 2 {
		t.Fatalf("stale finalize with fencing = %+v %v, want rejected, prior v2", res, err)
	}
	if r := RowByKey(t, db, "PAY-001"); r.PaymentStatus != engine.PaymentPending || r.Status != engine.StatusProcessing {
		t.Fatalf("row after the fenced-off finalize = %+v, want unchanged", r)
	}
	req.Fencing = false
	if res, err := a.Finalize(ctx, req); err != nil || !res.Committed || res.PriorVersion != 2 {
		t.Fatalf("stale finalize without fencing = %+v %v, want committed over v2", res, err)
	}
}

func testRenewOnlyByOwner(t *testing.T, b Backend) {
	db := seeded(t, b, 1)
	a := Connect(t, db)
	ctx := context.Background()
	won := mustClaim(t, a, claimAt("Worker-A", t0, time.Second))
	if ok, err := renew(ctx, a, won.Message, "Worker-A", t0.Add(2*time.Second)); !ok || err != nil {
		t.Fatalf("owner renew = %v %v", ok, err)
	}
	if ok, err := renew(ctx, a, won.Message, "Worker-B", t0.Add(3*time.Second)); ok || err != nil {
		t.Fatalf("renew by a non-owner = %v %v, want false", ok, err)
	}
	if r := RowByKey(t, db, "PAY-001"); !r.LockedUntil.Equal(t0.Add(2*time.Second)) || r.LeaseVersion != 1 {
		t.Fatalf("row = %+v, want the owner's renewed lease at v1", r)
	}
}

// A worker whose lease expired and was reclaimed cannot renew it back: its heartbeat reports the
// loss and leaves the new owner's lease alone.
func testRenewAfterReclaim(t *testing.T, b Backend) {
	db := seeded(t, b, 1)
	a, bc := Connect(t, db), Connect(t, db)
	ctx := context.Background()
	old := mustClaim(t, a, claimAt("Worker-A", t0, 100*time.Millisecond))
	later := t0.Add(200 * time.Millisecond)
	mustClaim(t, bc, claimAt("Worker-B", later, time.Second))
	if ok, err := renew(ctx, a, old.Message, "Worker-A", later.Add(5*time.Second)); ok || err != nil {
		t.Fatalf("renew after a reclaim = %v %v, want false", ok, err)
	}
	if r := RowByKey(t, db, "PAY-001"); r.LockedBy != "Worker-B" || !r.LockedUntil.Equal(later.Add(time.Second)) || r.LeaseVersion != 2 {
		t.Fatalf("row = %+v, want Worker-B's lease untouched", r)
	}
}

// A worker that crashes (its connection closed) while it holds a lease leaves the row as it
// was; another worker reclaims it once the lease has ended, not before, and finalizes it; the
// crashed worker's stale finalize on a new connection is then rejected.
func testCrashAndReclaim(t *testing.T, b Backend) {
	db := seeded(t, b, 2)
	ctx := context.Background()
	a, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := mustClaim(t, a, claimAt("Worker-A", t0, time.Second))
	a.Close() // the crash
	if r := RowByKey(t, db, "PAY-001"); r.Status != engine.StatusProcessing || r.LockedBy != "Worker-A" {
		t.Fatalf("row after the crash = %+v, want Worker-A's lease still there", r)
	}
	bc := Connect(t, db)
	if res := mustClaim(t, bc, claimAt("Worker-B", t0.Add(500*time.Millisecond), time.Second)); res.Message.IdempotencyKey != "PAY-002" {
		t.Fatalf("claim during the dead lease took %s, want PAY-002", res.Message.IdempotencyKey)
	}
	re := mustClaim(t, bc, claimAt("Worker-B", t0.Add(1001*time.Millisecond), time.Second))
	if re.Message.IdempotencyKey != "PAY-001" || re.PrevOwner != "Worker-A" || re.Message.LeaseVersion != 2 {
		t.Fatalf("reclaim = %+v, want PAY-001 from Worker-A at v2", re)
	}
	if fin, err := bc.Finalize(ctx, paid("Worker-B", re.Message)); err != nil || !fin.Committed {
		t.Fatalf("finalize of the reclaimed row: %+v %v", fin, err)
	}
	restarted := Connect(t, db)
	if fin, err := restarted.Finalize(ctx, paid("Worker-A", held.Message)); err != nil || fin.Committed || fin.PriorOwner != "Worker-B" {
		t.Fatalf("the crashed worker's stale finalize = %+v %v, want rejected (Worker-B finished it)", fin, err)
	}
	if r := RowByKey(t, db, "PAY-001"); r.TransactionID != "txn_PAY-001" || r.Attempts != 2 {
		t.Fatalf("row = %+v, want Worker-B's finalize, 2 attempts", r)
	}
}
