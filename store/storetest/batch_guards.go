package storetest

import (
	"context"
	"testing"
	"time"

	"leaselab/engine"
)

// A batch whose guards fail in every way at once: each message's outcome and its reason are
// its own, exactly as a Finalize of it alone would say, and only the messages whose guard held
// change. PAY-001 passes (fenced), PAY-002 was taken back by another worker, PAY-003 by the same
// worker under a newer version (only fencing catches it), PAY-004 was taken back and finalized
// by another worker, and PAY-005 passes without fencing.
func testFinalizeBatchMixedGuardsSayWhyEach(t *testing.T, be Backend) {
	db := seeded(t, be, 5)
	a, b := batcher(t, db), batcher(t, db)
	ctx := context.Background()
	lease := time.Second
	msgs, err := a.ClaimBatch(ctx, claimAt("Worker-A", t0, lease), 5)
	if err != nil || len(msgs) != 5 {
		t.Fatalf("batch claim = %s %v", keysOf(msgs), err)
	}
	later := t0.Add(lease + time.Millisecond) // every lease of the batch has ended
	take := func(c Batcher, worker, key string) engine.Message {
		t.Helper()
		req := claimAt(worker, later, time.Minute)
		req.Key = key
		res, err := c.Claim(ctx, req)
		if err != nil || res.Outcome != engine.ClaimWon {
			t.Fatalf("%s reclaims %s: %+v %v", worker, key, res, err)
		}
		return res.Message
	}
	take(b, "Worker-B", "PAY-002")
	take(a, "Worker-A", "PAY-003")
	if fin, err := b.Finalize(ctx, paid("Worker-B", take(b, "Worker-B", "PAY-004"))); err != nil || !fin.Committed {
		t.Fatalf("B finalizes PAY-004: %+v %v", fin, err)
	}
	before := map[string]engine.Row{}
	for _, k := range []string{"PAY-002", "PAY-003", "PAY-004"} {
		before[k] = RowByKey(t, db, k)
	}
	reqs := make([]engine.FinalizeRequest, len(msgs))
	for i, m := range msgs {
		reqs[i] = paid("Worker-A", m)
	}
	reqs[4].Fencing = false
	res, err := a.FinalizeBatch(ctx, reqs)
	if err != nil || len(res) != 5 {
		t.Fatalf("batch finalize = %+v %v", res, err)
	}
	want := []struct {
		committed bool
		status    string
		owner     string
		version   int64
	}{
		{true, engine.StatusProcessing, "Worker-A", 1},
		{false, engine.StatusProcessing, "Worker-B", 2},
		{false, engine.StatusProcessing, "Worker-A", 2},
		{false, engine.StatusProcessed, "Worker-B", 2},
		{true, engine.StatusProcessing, "Worker-A", 1},
	}
	for i, w := range want {
		r := res[i]
		rows := int64(0)
		if w.committed {
			rows = 1
		}
		if r.Committed != w.committed || r.RowsAffected != rows || r.PriorStatus != w.status || r.PriorOwner != w.owner ||
			r.PriorVersion != w.version || !r.At.Equal(t0) {
			t.Errorf("%s: result %+v, want committed=%v prior %s/%s/v%d", msgs[i].IdempotencyKey, r, w.committed, w.status, w.owner, w.version)
		}
	}
	for k, row := range before {
		if after := RowByKey(t, db, k); after != row {
			t.Errorf("%s changed by a finalize whose guard failed:\nbefore %+v\nafter  %+v", k, row, after)
		}
	}
	for _, k := range []string{"PAY-001", "PAY-005"} {
		if r := RowByKey(t, db, k); r.Status != engine.StatusProcessed || r.PaymentStatus != engine.PaymentPaid || r.TransactionID != "txn_"+k {
			t.Errorf("%s = %+v, want finalized and paid", k, r)
		}
	}
}

// A message twice in one batch is finalized once: the second finalize finds the row Processed
// (its guard fails) and says so, as two finalizes in turn would.
func testFinalizeBatchRepeatedMessageOnce(t *testing.T, be Backend) {
	db := seeded(t, be, 1)
	c := batcher(t, db)
	ctx := context.Background()
	won, err := c.Claim(ctx, claimFor("Worker-A"))
	if err != nil || won.Outcome != engine.ClaimWon {
		t.Fatal(won, err)
	}
	second := paid("Worker-A", won.Message)
	second.PaymentStatus, second.TransactionID = engine.PaymentFailed, ""
	res, err := c.FinalizeBatch(ctx, []engine.FinalizeRequest{paid("Worker-A", won.Message), second})
	if err != nil || len(res) != 2 {
		t.Fatal(res, err)
	}
	if !res[0].Committed || res[1].Committed || res[1].PriorStatus != engine.StatusProcessed || res[1].PriorOwner != "Worker-A" {
		t.Fatalf("results = %+v, want the first committed and the second rolled back (row Processed)", res)
	}
	if r := RowByKey(t, db, "PAY-001"); r.PaymentStatus != engine.PaymentPaid || r.TransactionID != "txn_PAY-001" {
		t.Fatalf("PAY-001 = %+v, want the first finalize's payment", r)
	}
}

// The results of a batch are in the order of its requests, whatever order the store finalizes
// them in (PostgreSQL's by key): here the keys come in reverse and one twice.
func testFinalizeBatchResultsInRequestOrder(t *testing.T, be Backend) {
	db := seeded(t, be, 3)
	c := batcher(t, db)
	ctx := context.Background()
	msgs := mustClaimBatch(t, c, 3)
	reqs := []engine.FinalizeRequest{paid("Worker-A", msgs[2]), paid("Worker-A", msgs[0]), paid("Worker-A", msgs[2]), paid("Worker-A", msgs[1])}
	res, err := c.FinalizeBatch(ctx, reqs)
	if err != nil || len(res) != 4 {
		t.Fatal(res, err)
	}
	if !res[0].Committed || !res[1].Committed || res[2].Committed || !res[3].Committed || res[2].PriorStatus != engine.StatusProcessed {
		t.Fatalf("results = %+v, want PAY-003, PAY-001 and PAY-002 committed and PAY-003's second finalize rolled back", res)
	}
	for _, m := range msgs {
		if r := RowByKey(t, db, m.IdempotencyKey); r.Status != engine.StatusProcessed || r.PaymentStatus != engine.PaymentPaid {
			t.Fatalf("%s = %+v, want finalized", m.IdempotencyKey, r)
		}
	}
}
