package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"leaselab/engine"
)

// Workers race on their own connections, each claiming and finalizing until nothing is left,
// with leases long enough never to expire: every message is finalized exactly once, every lost
// race is an outcome (or ErrBusy, retried), and no finalize commits over another's lease.
func testRacingWorkers(t *testing.T, b Backend) {
	const workers, msgs = 4, 40
	db := seeded(t, b, msgs)
	var (
		mu        sync.Mutex
		finalized = map[string]string{} // key -> worker
		wg        sync.WaitGroup
		errs      = make(chan error, workers)
	)
	for w := 0; w < workers; w++ {
		c := Connect(t, db)
		name := fmt.Sprintf("Worker-%d", w+1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for {
				res, err := c.Claim(ctx, claimAt(name, t0, time.Hour))
				switch {
				case errors.Is(err, engine.ErrBusy):
					continue
				case err != nil:
					errs <- err
					return
				case res.Outcome == engine.ClaimEmpty:
					return
				case res.Outcome == engine.ClaimBlocked || res.Outcome == engine.ClaimLost:
					time.Sleep(time.Millisecond)
					continue
				}
				for {
					fin, err := c.Finalize(ctx, paid(name, res.Message))
					if errors.Is(err, engine.ErrBusy) {
						continue
					}
					if err != nil || !fin.Committed {
						errs <- fmt.Errorf("%s's finalize of %s: %+v, %v", name, res.Message.IdempotencyKey, fin, err)
						return
					}
					break
				}
				mu.Lock()
				if prev, ok := finalized[res.Message.IdempotencyKey]; ok {
					errs <- fmt.Errorf("%s finalized twice (%s and %s)", res.Message.IdempotencyKey, prev, name)
				}
				finalized[res.Message.IdempotencyKey] = name
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c, err := db.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(finalized) != msgs || c.OutboxProcessed != msgs || c.PaymentsPaid != msgs || c.PaidWithTxID != msgs {
		t.Fatalf("%d finalized by the workers, counts %+v; want %d of each", len(finalized), c, msgs)
	}
	rows, _ := db.Snapshot(context.Background())
	for _, r := range rows {
		if r.Attempts != 1 || r.LockedBy != finalized[r.IdempotencyKey] {
			t.Fatalf("row %s = %+v, want one claim, by %s", r.IdempotencyKey, r, finalized[r.IdempotencyKey])
		}
	}
}

// bothSelect seeds one row and connects Worker-A (a) and Worker-B (bc), who each do the first
// half of the non-atomic claim at t0; the test fails unless both selects see the same candidate.
func bothSelect(t *testing.T, b Backend) (db engine.DB, a, bc engine.Conn, ma, mb engine.Message) {
	t.Helper()
	db = seeded(t, b, 1)
	a, bc = Connect(t, db), Connect(t, db)
	ctx := context.Background()
	ma, okA, errA := a.SelectCandidate(ctx, t0)
	mb, okB, errB := bc.SelectCandidate(ctx, t0)
	if !okA || !okB || ma.ID != mb.ID || errA != nil || errB != nil {
		t.Fatalf("both selects should see the same candidate: %+v %+v %v %v", ma, mb, errA, errB)
	}
	return db, a, bc, ma, mb
}

// mustTake is worker's non-atomic take of id on c, with a lease until t0 plus a second; the test
// fails on an error.
func mustTake(t *testing.T, c engine.Conn, id int64, worker string) engine.Message {
	t.Helper()
	m, err := take(context.Background(), c, id, worker, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The non-atomic claim is a plain read then an unconditional update: both workers can take the
// same row. This is what the naive-claim lesson shows.
func testNonAtomicBothTake(t *testing.T, b Backend) {
	db, a, bc, ma, mb := bothSelect(t, b)
	ta := mustTake(t, a, ma.ID, "Worker-A")
	tb := mustTake(t, bc, mb.ID, "Worker-B")
	if ta.LeaseVersion != 1 || tb.LeaseVersion != 2 || RowByKey(t, db, "PAY-001").LockedBy != "Worker-B" {
		t.Fatalf("takes: A v%d, B v%d", ta.LeaseVersion, tb.LeaseVersion)
	}
}

// The non-atomic take overwrites whatever the row has become since its select, even a row another
// worker has finalized meanwhile: the row is unfinished again and processed twice.
func testNonAtomicAfterFinalize(t *testing.T, b Backend) {
	db, a, bc, ma, mb := bothSelect(t, b)
	ctx := context.Background()
	ta := mustTake(t, a, ma.ID, "Worker-A")
	if fin, err := a.Finalize(ctx, paid("Worker-A", ta)); err != nil || !fin.Committed {
		t.Fatalf("A's finalize: %+v, %v", fin, err)
	}
	tb, err := take(ctx, bc, mb.ID, "Worker-B", t0.Add(time.Second))
	if err != nil {
		t.Fatalf("B's take of the row A finalized: %v", err)
	}
	if r := RowByKey(t, db, "PAY-001"); r.Status != engine.StatusProcessing || r.LockedBy != "Worker-B" || !r.ProcessedAt.IsZero() {
		t.Fatalf("after B's take: %+v", r)
	}
	if fin, err := bc.Finalize(ctx, paid("Worker-B", tb)); err != nil || !fin.Committed {
		t.Fatalf("B's finalize: %+v, %v", fin, err)
	}
}

// The naive worker loads every Pending row and finalizes each without a claim or a check: two of
// them do all the work twice, and every second finalize commits over the first.
func testNaiveLoadDoubles(t *testing.T, b Backend) {
	const n = 5
	db := seeded(t, b, n)
	ctx := context.Background()
	a, bc := Connect(t, db), Connect(t, db)
	la, errA := a.LoadPending(ctx)
	lb, errB := bc.LoadPending(ctx)
	if errA != nil || errB != nil || len(la) != n || len(lb) != n || la[0].IdempotencyKey != "PAY-001" || lb[n-1].IdempotencyKey != engine.MessageKey(n) {
		t.Fatalf("loads: %d and %d rows (%v, %v), want all %d Pending, oldest first", len(la), len(lb), errA, errB, n)
	}
	committed := 0
	for i := 0; i < n; i++ {
		for _, w := range []struct {
			c    engine.Conn
			name string
			m    engine.Message
		}{{a, "Worker-A", la[i]}, {bc, "Worker-B", lb[i]}} {
			fin, err := w.c.Finalize(ctx, engine.FinalizeRequest{Worker: w.name, Message: w.m, Now: t0,
				PaymentStatus: engine.PaymentPaid, TransactionID: "txn_" + w.name + "_" + w.m.IdempotencyKey})
			if err != nil {
				t.Fatal(err)
			}
			if fin.Committed {
				committed++
			}
		}
	}
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if committed != 2*n || c.OutboxProcessed != n || c.PaymentsPaid != n {
		t.Fatalf("%d finalizes committed for %d messages, counts %+v; want %d (the work done twice)", committed, n, c, 2*n)
	}
	if id := transactionID(t, db, "PAY-001"); id != "txn_Worker-B_PAY-001" {
		t.Fatalf("PAY-001's transaction id = %q, want the second writer's (the first was overwritten)", id)
	}
}

func testCounts(t *testing.T, b Backend) {
	db := seeded(t, b, 6)
	ctx := context.Background()
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Messages != 6 || c.OutboxPending != 6 || c.PaymentsPending != 6 || c.DuplicateRows != 0 || c.MaxOutboxPerKey != 1 ||
		c.MaxPaymentsPerKey != 1 || len(transactionIDs(t, db)) != 6 {
		t.Fatalf("counts = %+v", c)
	}
	if err := db.CreatePayment(ctx, engine.NewPayment{Key: "PAY-001", Amount: 1, CreatedAt: t0}); err == nil {
		t.Fatal("a second payment with the key PAY-001 was accepted")
	}
	if c2, _ := db.Counts(ctx); c2.Messages != 6 || c2.PaymentsPending != 6 {
		t.Fatalf("counts after a refused payment = %+v, want nothing half-written", c2)
	}
}

// transactionIDs reads every payment's TransactionId by key.
func transactionIDs(t *testing.T, db engine.DB) map[string]string {
	t.Helper()
	ids := map[string]string{}
	if err := db.EachTransactionID(context.Background(), func(key, id string) error {
		ids[key] = id
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// transactionID is key's TransactionId, "" when NULL or when it has no payment.
func transactionID(t *testing.T, db engine.DB, key string) string {
	t.Helper()
	return transactionIDs(t, db)[key]
}
