package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
)

// Batcher is a connection with the batch and fused methods: a claim of up to k messages in one
// transaction, the finalize of several in one (each in a savepoint of its own), and a finalize
// fused with the next claim. Both backends have them; the suite tests them on every Conn that
// has them.
type Batcher interface {
	engine.Conn
	ClaimBatch(ctx context.Context, req engine.ClaimRequest, k int) ([]engine.Message, error)
	FinalizeAndClaim(ctx context.Context, fin engine.FinalizeRequest, next engine.ClaimRequest) (engine.FinalizeResult, engine.ClaimResult, error)
	FinalizeBatch(ctx context.Context, reqs []engine.FinalizeRequest) ([]engine.FinalizeResult, error)
}

// batcher opens a worker connection with the batch methods; the test is skipped, saying so,
// when the backend has none.
func batcher(t *testing.T, db engine.DB) Batcher {
	t.Helper()
	return connectAs[Batcher](t, db, "skipped: this backend's connections have no batch or fused methods")
}

// connectAs opens a worker connection that offers T; the test is skipped, saying why, when the
// backend's connections do not.
func connectAs[T any](t *testing.T, db engine.DB, why string) T {
	t.Helper()
	c, ok := Connect(t, db).(T)
	if !ok {
		t.Skip(why)
	}
	return c
}

// claimFor is worker's claim of the oldest claimable message at t0, with a one-second lease.
func claimFor(worker string) engine.ClaimRequest { return claimAt(worker, t0, time.Second) }

// mustClaimBatch is Worker-A's batch claim of k messages at t0; the test fails unless it takes k.
func mustClaimBatch(t *testing.T, c Batcher, k int) []engine.Message {
	t.Helper()
	msgs, err := c.ClaimBatch(context.Background(), claimFor("Worker-A"), k)
	if err != nil || len(msgs) != k {
		t.Fatal(msgs, err)
	}
	return msgs
}

func keysOf(msgs []engine.Message) string {
	keys := make([]string, len(msgs))
	for i, m := range msgs {
		keys[i] = m.IdempotencyKey
	}
	return strings.Join(keys, ",")
}

func testClaimBatchTakesOldestInOrder(t *testing.T, be Backend) {
	db := seeded(t, be, 5)
	c := batcher(t, db)
	ctx := context.Background()
	until := t0.Add(time.Second)
	req := engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: until}
	got, err := c.ClaimBatch(ctx, req, 3)
	if err != nil {
		t.Fatal(err)
	}
	if keysOf(got) != "PAY-001,PAY-002,PAY-003" {
		t.Fatalf("batch = %s, want PAY-001..003 in claim order", keysOf(got))
	}
	for _, m := range got {
		if m.LeaseVersion != 1 || !m.LockedUntil.Equal(until) || m.Type != engine.MessageType || m.Payload == "" {
			t.Fatalf("claimed message = %+v", m)
		}
		r := RowByKey(t, db, m.IdempotencyKey)
		if r.Status != engine.StatusProcessing || r.LockedBy != "Worker-A" || !r.LockedUntil.Equal(until) || r.Attempts != 1 || r.LeaseVersion != 1 {
			t.Fatalf("row after batch claim = %+v", r)
		}
	}
	if got, _ = c.ClaimBatch(ctx, req, 3); keysOf(got) != "PAY-004,PAY-005" {
		t.Fatalf("second batch = %s, want the 2 left", keysOf(got))
	}
	if got, err = c.ClaimBatch(ctx, req, 3); err != nil || len(got) != 0 {
		t.Fatalf("third batch = %s %v, want none", keysOf(got), err)
	}
}

// A batch skips live leases and takes expired ones back, as Claim does (a lease is live up to
// and including LockedUntilUtc).
func testClaimBatchSkipsLiveLeasesAndReclaimsExpired(t *testing.T, be Backend) {
	db := seeded(t, be, 3)
	a, b := batcher(t, db), batcher(t, db)
	ctx := context.Background()
	until := t0.Add(500 * time.Millisecond)
	if res, err := a.Claim(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: until}); err != nil || res.Outcome != engine.ClaimWon {
		t.Fatalf("A claim: %+v %v", res, err)
	}
	got, err := b.ClaimBatch(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: until, Until: until.Add(time.Second)}, 10)
	if err != nil || keysOf(got) != "PAY-002,PAY-003" {
		t.Fatalf("batch at exactly LockedUntilUtc = %s %v, want PAY-002,PAY-003", keysOf(got), err)
	}
	later := until.Add(time.Millisecond)
	got, err = b.ClaimBatch(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: later, Until: later.Add(time.Second)}, 10)
	if err != nil || keysOf(got) != "PAY-001" || got[0].LeaseVersion != 2 {
		t.Fatalf("batch 1 ms after the lease = %+v %v, want a reclaim of PAY-001 at v2", got, err)
	}
	if r := RowByKey(t, db, "PAY-001"); r.LockedBy != "Worker-B" || r.Attempts != 2 {
		t.Fatalf("row after reclaim = %+v", r)
	}
}

func testClaimBatchRefusesBadRequests(t *testing.T, be Backend) {
	db := seeded(t, be, 1)
	c := batcher(t, db)
	ctx := context.Background()
	if _, err := c.ClaimBatch(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0}, 0); err == nil {
		t.Fatal("k = 0: want an error")
	}
	if _, err := c.ClaimBatch(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0, Key: "PAY-001"}, 1); err == nil {
		t.Fatal("a keyed batch: want an error")
	}
	if r := RowByKey(t, db, "PAY-001"); r.Status != engine.StatusPending {
		t.Fatalf("a refused batch changed the row: %+v", r)
	}
}

// Connections racing batch claims never get the same row: every message is claimed exactly once.
func testClaimBatchRacingConnectionsNeverShare(t *testing.T, be Backend) {
	const messages, workers, k = 60, 6, 4
	for round := 0; round < 5; round++ {
		db := seeded(t, be, messages)
		conns := make([]Batcher, workers)
		for i := range conns {
			conns[i] = batcher(t, db)
		}
		claimedBy := make([][]engine.Message, workers)
		errs := AtOnce(workers, nil, func(w int) error {
			req := engine.ClaimRequest{Worker: fmt.Sprintf("Worker-%d", w), Now: t0, Until: t0.Add(time.Minute)}
			for {
				got, err := conns[w].ClaimBatch(context.Background(), req, k)
				if err != nil || len(got) == 0 {
					return err
				}
				claimedBy[w] = append(claimedBy[w], got...)
			}
		})
		owner := map[string]string{}
		for w, msgs := range claimedBy {
			if errs[w] != nil {
				t.Fatal(errs[w])
			}
			name := fmt.Sprintf("Worker-%d", w)
			for _, m := range msgs {
				if prev, dup := owner[m.IdempotencyKey]; dup {
					t.Fatalf("round %d: %s claimed by %s and %s", round, m.IdempotencyKey, prev, name)
				}
				owner[m.IdempotencyKey] = name
			}
		}
		if len(owner) != messages {
			t.Fatalf("round %d: %d messages claimed, want %d", round, len(owner), messages)
		}
		rows, err := db.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Attempts != 1 || r.LeaseVersion != 1 || r.LockedBy != owner[r.IdempotencyKey] {
				t.Fatalf("round %d: row %+v, want one claim by %s", round, r, owner[r.IdempotencyKey])
			}
		}
	}
}

func testFinalizeAndClaimCommitsBoth(t *testing.T, be Backend) {
	db := seeded(t, be, 2)
	c := batcher(t, db)
	ctx := context.Background()
	next := claimFor("Worker-A")
	first, err := c.Claim(ctx, next)
	if err != nil || first.Outcome != engine.ClaimWon {
		t.Fatal(first, err)
	}
	fin, cl, err := c.FinalizeAndClaim(ctx, paid("Worker-A", first.Message), next)
	if err != nil || !fin.Committed || fin.RowsAffected != 1 || fin.PriorOwner != "Worker-A" || fin.PriorStatus != engine.StatusProcessing {
		t.Fatalf("finalize half = %+v %v", fin, err)
	}
	if cl.Outcome != engine.ClaimWon || cl.Message.IdempotencyKey != "PAY-002" || cl.Message.LeaseVersion != 1 {
		t.Fatalf("claim half = %+v, want PAY-002 won at v1", cl)
	}
	if r := RowByKey(t, db, "PAY-001"); r.Status != engine.StatusProcessed || r.PaymentStatus != engine.PaymentPaid || r.TransactionID != "txn_PAY-001" {
		t.Fatalf("PAY-001 after the fused step = %+v", r)
	}
	if r := RowByKey(t, db, "PAY-002"); r.Status != engine.StatusProcessing || r.LockedBy != "Worker-A" {
		t.Fatalf("PAY-002 after the fused step = %+v", r)
	}
	fin, cl, err = c.FinalizeAndClaim(ctx, paid("Worker-A", cl.Message), next)
	if err != nil || !fin.Committed || cl.Outcome != engine.ClaimEmpty {
		t.Fatalf("last fused step = %+v %+v %v, want committed and empty", fin, cl, err)
	}
}

// A fused step by a worker that does not own the row rolls its finalize back, the payment update
// with it, and still claims the next message in a transaction of its own.
func testFinalizeAndClaimByNonOwnerRollsBackFinalize(t *testing.T, be Backend) {
	db := seeded(t, be, 2)
	a, b := batcher(t, db), batcher(t, db)
	ctx := context.Background()
	won, err := a.Claim(ctx, claimFor("Worker-A"))
	if err != nil || won.Outcome != engine.ClaimWon {
		t.Fatal(won, err)
	}
	before := RowByKey(t, db, "PAY-001")
	fin, cl, err := b.FinalizeAndClaim(ctx, paid("Worker-B", won.Message),
		claimFor("Worker-B"))
	if err != nil {
		t.Fatal(err)
	}
	if fin.Committed || fin.RowsAffected != 0 || fin.PriorOwner != "Worker-A" {
		t.Fatalf("non-owner fused finalize = %+v, want rolled back with 0 rows", fin)
	}
	if after := RowByKey(t, db, "PAY-001"); after != before {
		t.Fatalf("PAY-001 changed by a rejected finalize:\nbefore %+v\nafter  %+v", before, after)
	}
	if cl.Outcome != engine.ClaimWon || cl.Message.IdempotencyKey != "PAY-002" {
		t.Fatalf("claim after a lost finalize = %+v, want PAY-002", cl)
	}
	if r := RowByKey(t, db, "PAY-002"); r.LockedBy != "Worker-B" {
		t.Fatalf("PAY-002 LockedBy = %q, want Worker-B", r.LockedBy)
	}
}

func testFinalizeAndClaimFencingRejectsStaleVersion(t *testing.T, be Backend) {
	db := seeded(t, be, 1)
	a := batcher(t, db)
	ctx := context.Background()
	first, _ := a.Claim(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0.Add(time.Millisecond)})
	later := t0.Add(10 * time.Millisecond)
	second, _ := a.Claim(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: later, Until: later.Add(time.Second)})
	if second.Outcome != engine.ClaimWon || second.Message.LeaseVersion != 2 {
		t.Fatalf("second claim = %+v", second)
	}
	fin, cl, err := a.FinalizeAndClaim(ctx, paid("Worker-A", first.Message), engine.ClaimRequest{Worker: "Worker-A", Now: later, Until: later.Add(time.Second)})
	if err != nil || fin.Committed || fin.PriorVersion != 2 {
		t.Fatalf("stale fused finalize = %+v %v, want rejected over v2", fin, err)
	}
	if cl.Outcome != engine.ClaimBlocked || cl.PrevOwner != "Worker-A" {
		t.Fatalf("claim half = %+v, want blocked by the live lease", cl)
	}
	if r := RowByKey(t, db, "PAY-001"); r.Status != engine.StatusProcessing || r.PaymentStatus != engine.PaymentPending {
		t.Fatalf("row after a fenced-off finalize = %+v", r)
	}
}

// A worker finalizing its own expired (but not reclaimed) lease claims the next message, not the
// one it has just finalized.
func testFinalizeAndClaimSkipsTheRowItFinalizes(t *testing.T, be Backend) {
	db := seeded(t, be, 2)
	a := batcher(t, db)
	ctx := context.Background()
	won, _ := a.Claim(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0.Add(time.Millisecond)})
	later := t0.Add(time.Second) // the lease has expired; nobody took the row
	fin := paid("Worker-A", won.Message)
	fin.Now = later
	res, cl, err := a.FinalizeAndClaim(ctx, fin, engine.ClaimRequest{Worker: "Worker-A", Now: later, Until: later.Add(time.Second)})
	if err != nil || !res.Committed || cl.Outcome != engine.ClaimWon || cl.Message.IdempotencyKey != "PAY-002" {
		t.Fatalf("fused step after expiry = %+v %+v %v, want PAY-001 finalized and PAY-002 claimed", res, cl, err)
	}
}

func testFinalizeAndClaimKeyed(t *testing.T, be Backend) {
	db := seeded(t, be, 3)
	a := batcher(t, db)
	ctx := context.Background()
	won, _ := a.Claim(ctx, claimFor("Worker-A"))
	res, cl, err := keyedFused(ctx, a, won.Message, "PAY-003")
	if err != nil || !res.Committed || cl.Outcome != engine.ClaimWon || cl.Message.IdempotencyKey != "PAY-003" {
		t.Fatalf("keyed fused step = %+v %+v %v, want PAY-003 claimed", res, cl, err)
	}
}

// keyedFused is Worker-A's fused step at t0: it finalizes won as paid and claims the message
// with key, with a one-second lease.
func keyedFused(ctx context.Context, a Batcher, won engine.Message, key string) (engine.FinalizeResult, engine.ClaimResult, error) {
	next := claimFor("Worker-A")
	next.Key = key
	return a.FinalizeAndClaim(ctx, paid("Worker-A", won), next)
}

// An error in the claim half rolls back the finalize half too: nothing is half done.
func testFinalizeAndClaimErrorRollsBackBoth(t *testing.T, be Backend) {
	db := seeded(t, be, 2)
	a := batcher(t, db)
	ctx := context.Background()
	won, _ := a.Claim(ctx, claimFor("Worker-A"))
	before := RowByKey(t, db, "PAY-001")
	_, _, err := keyedFused(ctx, a, won.Message, "PAY-999")
	if err == nil {
		t.Fatal("claim of an unknown key: want an error")
	}
	if after := RowByKey(t, db, "PAY-001"); after != before {
		t.Fatalf("finalize half committed despite the error:\nbefore %+v\nafter  %+v", before, after)
	}
	// The failed transaction is over: the same connection finalizes in a transaction of its own.
	fin, err := a.Finalize(ctx, paid("Worker-A", won.Message))
	if err != nil || !fin.Committed {
		t.Fatalf("finalize after the failed transaction: %+v, %v", fin, err)
	}
	if got := RowByKey(t, db, "PAY-001").Status; got != engine.StatusProcessed {
		t.Fatalf("PAY-001 is %s after its finalize, want Processed", got)
	}
}

// Workers looping on the fused step over one queue finalize every message exactly once.
func testFinalizeAndClaimRacingWorkersFinalizeEachOnce(t *testing.T, be Backend) {
	const messages, workers = 40, 4
	db := seeded(t, be, messages)
	done := make([]map[string]bool, workers)
	conns := make([]Batcher, workers)
	for w := range workers {
		conns[w], done[w] = batcher(t, db), map[string]bool{}
	}
	errs := AtOnce(workers, nil, func(w int) error {
		ctx, c := context.Background(), conns[w]
		name := fmt.Sprintf("Worker-%d", w)
		req := engine.ClaimRequest{Worker: name, Now: t0, Until: t0.Add(time.Minute)}
		cur, err := c.Claim(ctx, req)
		for err == nil && cur.Outcome == engine.ClaimWon {
			var fin engine.FinalizeResult
			m := cur.Message
			fin, cur, err = c.FinalizeAndClaim(ctx, paid(name, m), req)
			if err == nil && !fin.Committed {
				err = fmt.Errorf("%s lost %s", name, m.IdempotencyKey)
			}
			done[w][m.IdempotencyKey] = true
		}
		return err
	})
	seen := map[string]int{}
	for w := range workers {
		if errs[w] != nil {
			t.Fatal(errs[w])
		}
		for k := range done[w] {
			seen[k]++
		}
	}
	c, err := db.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != messages || c.OutboxProcessed != messages || c.PaymentsPaid != messages {
		t.Fatalf("finalized %d distinct, counts %+v; want all %d once", len(seen), c, messages)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s finalized by %d workers", k, n)
		}
	}
}

func testFinalizeBatchCommitsEach(t *testing.T, be Backend) {
	db := seeded(t, be, 4)
	c := batcher(t, db)
	ctx := context.Background()
	msgs := mustClaimBatch(t, c, 3)
	reqs := make([]engine.FinalizeRequest, len(msgs))
	for i, m := range msgs {
		reqs[i] = paid("Worker-A", m)
	}
	res, err := c.FinalizeBatch(ctx, reqs)
	if err != nil || len(res) != 3 {
		t.Fatal(res, err)
	}
	for i, r := range res {
		if !r.Committed || r.RowsAffected != 1 || r.PriorOwner != "Worker-A" || r.PriorStatus != engine.StatusProcessing || r.PriorVersion != 1 {
			t.Fatalf("result %d = %+v", i, r)
		}
		row := RowByKey(t, db, msgs[i].IdempotencyKey)
		if row.Status != engine.StatusProcessed || row.PaymentStatus != engine.PaymentPaid || row.TransactionID != "txn_"+msgs[i].IdempotencyKey {
			t.Fatalf("row after batch finalize = %+v", row)
		}
	}
	if r := RowByKey(t, db, "PAY-004"); r.Status != engine.StatusPending {
		t.Fatalf("PAY-004 = %+v, want untouched", r)
	}
	if res, err := c.FinalizeBatch(ctx, nil); err != nil || res != nil {
		t.Fatalf("empty batch = %v %v", res, err)
	}
}

// A finalize in a batch whose lease is someone else's is rolled back alone, its payment update
// with it; the others commit.
func testFinalizeBatchRollsBackOnlyTheLostOne(t *testing.T, be Backend) {
	db := seeded(t, be, 3)
	a, b := batcher(t, db), batcher(t, db)
	ctx := context.Background()
	msgs, _ := a.ClaimBatch(ctx, claimFor("Worker-A"), 2)
	theirs, _ := b.Claim(ctx, claimFor("Worker-B"))
	if len(msgs) != 2 || theirs.Outcome != engine.ClaimWon {
		t.Fatal(msgs, theirs)
	}
	before := RowByKey(t, db, "PAY-003")
	res, err := a.FinalizeBatch(ctx, []engine.FinalizeRequest{
		paid("Worker-A", msgs[0]), paid("Worker-A", theirs.Message), paid("Worker-A", msgs[1])})
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Committed || res[1].Committed || !res[2].Committed || res[1].RowsAffected != 0 || res[1].PriorOwner != "Worker-B" {
		t.Fatalf("results = %+v, want the middle one rolled back", res)
	}
	if after := RowByKey(t, db, "PAY-003"); after != before {
		t.Fatalf("PAY-003 changed by a rejected finalize:\nbefore %+v\nafter  %+v", before, after)
	}
	for _, m := range msgs {
		if r := RowByKey(t, db, m.IdempotencyKey); r.Status != engine.StatusProcessed || r.PaymentStatus != engine.PaymentPaid {
			t.Fatalf("%s = %+v, want finalized", m.IdempotencyKey, r)
		}
	}
}

// An error in a batch rolls back every finalize of it.
func testFinalizeBatchErrorRollsBackAll(t *testing.T, be Backend) {
	db := seeded(t, be, 2)
	c := batcher(t, db)
	ctx := context.Background()
	msgs, _ := c.ClaimBatch(ctx, claimFor("Worker-A"), 2)
	ghost := engine.Message{ID: 999, IdempotencyKey: "PAY-999", LeaseVersion: 1}
	if _, err := c.FinalizeBatch(ctx, []engine.FinalizeRequest{paid("Worker-A", msgs[0]), paid("Worker-A", ghost)}); err == nil {
		t.Fatal("finalize of a message that does not exist: want an error")
	}
	if r := RowByKey(t, db, msgs[0].IdempotencyKey); r.Status != engine.StatusProcessing || r.PaymentStatus != engine.PaymentPending {
		t.Fatalf("%s = %+v, want the batch rolled back", msgs[0].IdempotencyKey, r)
	}
}

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
