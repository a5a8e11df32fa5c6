package store

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
)

// TestCopiesComeBack: each way engine/explore copies a database and brings the copy back gives
// the rows as they were, seen by a worker's own connection, and leaves the file in WAL mode.
func TestCopiesComeBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Create(ctx, filepath.Join(dir, "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 1; i <= 3; i++ {
		key := fmt.Sprintf("PAY-%03d", i)
		adminExec(t, db, `INSERT INTO Payments (IdempotencyKey, Amount, CreatedAtUtc) VALUES (?, 100, '2026-01-15T09:00:00.000Z')`, key)
		adminExec(t, db, `INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, CreatedAtUtc) VALUES (?, 'PaymentCreated', '{}', '2026-01-15T09:00:00.000Z')`, key)
	}
	want, err := db.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Connect(ctx) // a worker's connection, open across the restores
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	change := func() {
		adminExec(t, db, `UPDATE OutboxMessages SET Status = 'Processing', LockedBy = 'Worker-A', LockedUntilUtc = '2026-01-15T09:00:00.500Z', LeaseVersion = 1 WHERE Id = 1`)
		adminExec(t, db, `UPDATE Payments SET PaymentStatus = 'Paid', TransactionId = 'txn_PAY-002_1' WHERE Id = 2`)
	}
	rows, err := db.DumpRows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	img, err := db.Serialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "copy.db")
	if err := db.VacuumInto(ctx, file); err != nil {
		t.Fatal(err)
	}
	for _, way := range []struct {
		name string
		back func() error
	}{
		{"rows", func() error { return db.LoadRows(ctx, rows) }},
		{"rows over", func() error {
			changed, err := db.DumpRows(ctx)
			if err != nil {
				return err
			}
			return db.LoadRowsOver(ctx, changed, rows)
		}},
		{"memory", func() error { return db.Deserialize(ctx, img) }},
		{"file", func() error { return db.RestoreFrom(ctx, file) }},
	} {
		change()
		if err := way.back(); err != nil {
			t.Fatalf("%s: %v", way.name, err)
		}
		got, err := db.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: rows\n%+v\nwant\n%+v", way.name, got, want)
		}
		msgs, err := conn.LoadPending(ctx)
		if err != nil || len(msgs) != 3 {
			t.Errorf("%s: the worker's connection loads %d pending (%v), want 3", way.name, len(msgs), err)
		}
		var mode string
		if err := db.admin.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("%s: journal mode %q (%v), want wal", way.name, mode, err)
		}
	}
}

func adminExec(t *testing.T, db *DB, q string, args ...any) {
	t.Helper()
	if _, err := db.admin.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
