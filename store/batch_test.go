package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"
)

// storeConn opens a worker connection with the batch and fused methods.
func storeConn(t *testing.T, db *store.DB) *store.Conn {
	t.Helper()
	return connect(t, db).(*store.Conn)
}

func keysOf(msgs []engine.Message) string {
	keys := make([]string, len(msgs))
	for i, m := range msgs {
		keys[i] = m.IdempotencyKey
	}
	return strings.Join(keys, ",")
}

// The batch claim takes the rows its read found by primary key: no full scan, no temporary
// B-tree.
func TestClaimBatchQueryPlanUsesIndex(t *testing.T) {
	db := newDB(t, 50)
	got := queryPlan(t, db, store.ClaimBatchSQL, sql.Named("now", store.FormatTime(t0)),
		sql.Named("worker", "Worker-A"), sql.Named("until", store.FormatTime(t0)), sql.Named("ids", "[1,2]"))
	want := "SEARCH OutboxMessages USING INTEGER PRIMARY KEY (rowid=?)\nLIST SUBQUERY 1\nSCAN json_each VIRTUAL TABLE INDEX 1:"
	if got != want {
		t.Fatalf("batch claim plan:\n%s\nwant:\n%s", got, want)
	}
}

func paid(worker string, m engine.Message) engine.FinalizeRequest {
	return engine.FinalizeRequest{Worker: worker, Message: m, Now: t0, PaymentStatus: engine.PaymentPaid,
		TransactionID: "txn_" + m.IdempotencyKey, OwnershipCheck: true, Fencing: true}
}

// SeedBulk writes exactly the rows engine.Seed writes through CreatePayment (250: two full
// multi-row INSERTs and a short one).
func TestSeedBulkMatchesSeed(t *testing.T) {
	const n = 250
	ctx := context.Background()
	seeded := newDB(t, n)
	bulk, got := bulkSeeded(t, n)
	want, err := seeded.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || len(want) != n {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d:\nSeedBulk %+v\nSeed     %+v", i, got[i], want[i])
		}
	}
	// Snapshot has no Type or Payload: compare them through the naive load.
	wantMsgs, err := storeConn(t, seeded).LoadPending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gotMsgs, err := storeConn(t, bulk).LoadPending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range wantMsgs {
		if gotMsgs[i] != wantMsgs[i] {
			t.Fatalf("message %d:\nSeedBulk %+v\nSeed     %+v", i, gotMsgs[i], wantMsgs[i])
		}
	}
	if err := bulk.SeedBulk(ctx, 1, t0); err == nil {
		t.Fatal("seeding PAY-001 twice: want an error")
	}
	if err := bulk.SeedBulk(ctx, -1, t0); err == nil {
		t.Fatal("a negative count: want an error")
	}
}

// SeedBulk crosses its transaction boundary (10,000 rows) without a gap or a duplicate.
func TestSeedBulkLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("10,001 rows")
	}
	const n = 10_001
	_, rows := bulkSeeded(t, n)
	if len(rows) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	for i, r := range rows {
		key, created := engine.MessageKey(i+1), t0.Add(time.Duration(i-n)*time.Millisecond)
		if r.IdempotencyKey != key || !r.CreatedAt.Equal(created) || r.Status != engine.StatusPending || r.PaymentStatus != engine.PaymentPending {
			t.Fatalf("row %d = %+v, want %s created %v", i, r, key, created)
		}
	}
}

// bulkSeeded seeds n payments with SeedBulk into a new database file, closed at the end of the
// test, and returns it with its rows.
func bulkSeeded(t *testing.T, n int) (*store.DB, []engine.Row) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Create(ctx, filepath.Join(t.TempDir(), "bulk.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.SeedBulk(ctx, n, t0); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return db, rows
}
