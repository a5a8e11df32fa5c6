package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"
	"leaselab/store/storetest"

	_ "modernc.org/sqlite"
)

var t0 = engine.Epoch

// newDB creates a database file in a test folder with n seeded payments (PAY-001…).
func newDB(t *testing.T, n int) *store.DB {
	t.Helper()
	db := sqliteBackend.New(t).(*store.DB)
	storetest.Seed(t, db, n)
	return db
}

// connect opens a worker connection to db, closed at the end of the test.
func connect(t *testing.T, db *store.DB) engine.Conn { return storetest.Connect(t, db) }

// claimFor is worker's claim of the oldest claimable message at t0, with a one-second lease.
func claimFor(worker string) engine.ClaimRequest {
	return engine.ClaimRequest{Worker: worker, Now: t0, Until: t0.Add(time.Second)}
}

func rowByKey(t *testing.T, db *store.DB, key string) engine.Row {
	return storetest.RowByKey(t, db, key)
}

// The claim's reads are each a search of one partial index that stops after :k entries: no full
// scan, no temporary B-tree for ORDER BY, and no walk through the live leases. Schema 6 keeps
// them all in OutboxMessages_Queue: the Pending rows that never failed are its entries with no
// wait (<expr>=?, the IS NULL), the leases that ended at one instant its Processing entries at
// that instant, the first such instant a range of them.
func TestClaimQueryPlanUsesIndex(t *testing.T) {
	db := newDB(t, 50)
	const (
		fresh = "CO-ROUTINE (subquery-1)\nSEARCH OutboxMessages USING INDEX OutboxMessages_Queue (Status=? AND <expr>=?)\n" +
			"SCAN (subquery-1)\nUNION ALL\n"
		expired = "SEARCH OutboxMessages USING INDEX OutboxMessages_Queue (Status=? AND <expr>=?)\nSCALAR SUBQUERY %d\n" +
			"SEARCH OutboxMessages USING INDEX OutboxMessages_Queue (Status=? AND <expr>>? AND <expr><?)"
	)
	read := "COMPOUND QUERY\nLEFT-MOST SUBQUERY\n" + fresh +
		"CO-ROUTINE (subquery-3)\nSCAN OutboxMessages USING INDEX OutboxMessages_Retried\nSCAN (subquery-3)\nUNION ALL\n" +
		"CO-ROUTINE (subquery-6)\n" + fmt.Sprintf(expired, 5) + "\nSCAN (subquery-6)"
	// The due claim's read (retry backoff on) takes the first entry of the Pending rows that never
	// failed, and the first dueScan rows whose backoff is over (the range up to now of the Pending
	// rows that failed, in the index's order; only those are sorted): it never walks the rows still
	// in their backoff (schema 4's read did, as a filter on its index of Pending rows), nor sorts
	// every due row (a worker whose clock runs ahead sees them all due).
	due := "COMPOUND QUERY\nLEFT-MOST SUBQUERY\n" + fresh + "CO-ROUTINE (subquery-4)\n" +
		"CO-ROUTINE (subquery-3)\nSEARCH OutboxMessages USING INDEX OutboxMessages_Queue (Status=? AND <expr><?)\n" +
		"SCAN (subquery-3)\nUSE TEMP B-TREE FOR ORDER BY\nSCAN (subquery-4)\nUNION ALL\nCO-ROUTINE (subquery-7)\n" +
		fmt.Sprintf(expired, 6) + "\nSCAN (subquery-7)"
	for _, c := range []struct{ name, q, want string }{
		{"read", store.ClaimReadSQL, read},
		{"due read", store.ClaimDueReadSQL, due},
		{"expired", store.ClaimExpiredSQL, fmt.Sprintf(expired, 1)},
		// Why a due claim found nothing: the first Pending entry and the first lease of
		// OutboxMessages_Queue, not a sort of every unfinished row. (It runs only when no Pending
		// row that never failed is left, so the first Pending entry is the first backoff to end.)
		{"due blocker", store.DueBlockerSQL, "CO-ROUTINE (subquery-4)\nCOMPOUND QUERY\nLEFT-MOST SUBQUERY\nCO-ROUTINE (subquery-1)\n" +
			"SEARCH OutboxMessages USING INDEX OutboxMessages_Queue (Status=?)\nSCAN (subquery-1)\nUNION ALL\nCO-ROUTINE (subquery-3)\n" +
			"SEARCH OutboxMessages USING INDEX OutboxMessages_Queue (Status=?)\nSCAN (subquery-3)\nSCAN (subquery-4)\nUSE TEMP B-TREE FOR ORDER BY"},
	} {
		got := queryPlan(t, db, c.q, sql.Named("now", store.FormatTime(t0)), sql.Named("after", ""), sql.Named("k", 1))
		if got != c.want {
			t.Errorf("%s claim read plan:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
}

// queryPlan returns the EXPLAIN QUERY PLAN details of q, one per line, read on a read-only
// connection of its own.
func queryPlan(t *testing.T, db *store.DB, q string, args ...any) string {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+db.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

func TestCreateRefusesForeignFileAndLeavesItAlone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	content := []byte("this is not a database, and it must stay as it is\n")
	os.WriteFile(text, content, 0o644)
	_, err := store.Create(ctx, text)
	var env *store.EnvError
	if !errors.As(err, &env) || !errors.Is(err, store.ErrNotOurs) || !strings.Contains(err.Error(), text) {
		t.Fatalf("Create(text file) err = %v, want EnvError naming the path and ErrNotOurs", err)
	}
	if b, _ := os.ReadFile(text); !bytes.Equal(b, content) {
		t.Fatal("the foreign file was changed")
	}
	// Another application's SQLite database: refused, untouched.
	other := filepath.Join(dir, "other.db")
	o, _ := sql.Open("sqlite", other)
	if _, err := o.Exec("CREATE TABLE Orders (Id INTEGER PRIMARY KEY); INSERT INTO Orders VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	o.Close()
	before, _ := os.ReadFile(other)
	if _, err := store.Create(ctx, other); !errors.Is(err, store.ErrNotOurs) {
		t.Fatalf("Create(other app's db) err = %v, want ErrNotOurs", err)
	}
	if after, _ := os.ReadFile(other); !bytes.Equal(before, after) {
		t.Fatal("the other application's database was changed")
	}
	if _, err := os.Stat(other + "-wal"); err == nil {
		t.Fatal("a WAL file was created beside the other application's database")
	}
}

func TestCreateOnUnwritablePath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	os.WriteFile(file, []byte("x"), 0o644)
	// A path under a regular file cannot be created, even by root.
	path := filepath.Join(file, "sub", "leaselab.db")
	_, err := store.Create(ctx, path)
	var env *store.EnvError
	if !errors.As(err, &env) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want an EnvError naming %s", err, path)
	}
}

func TestCreateResetsOurDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keep.db")
	db, err := store.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	engine.Seed(ctx, engine.NewGateway(db), 3, t0)
	db.Close()
	if _, err := store.CreateWith(ctx, path, store.Options{}); !errors.Is(err, store.ErrHoldsRows) {
		t.Fatalf("CreateWith(db with rows, no Reset) = %v, want ErrHoldsRows", err)
	}
	db, err = store.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if rows, _ := db.Snapshot(ctx); len(rows) != 0 {
		t.Fatalf("%d rows after reset, want 0", len(rows))
	}
	if ok, err := db.IntegrityCheck(ctx); ok != "ok" || err != nil {
		t.Fatalf("integrity_check = %q %v", ok, err)
	}
	if _, err := store.Open(ctx, path); err != nil {
		t.Fatalf("Open(our db) = %v", err)
	}
}

// A leaselab database of another schema version (1, whose claim index was on Status; 2, whose
// claim walked the live leases) is refused by Open, which says so and what to do, and rebuilt by
// Create with Reset.
func TestOtherSchemaVersion(t *testing.T) {
	for _, v := range []int{1, 2, 3, 4, 5} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { testOtherSchemaVersion(t, v) })
	}
}

func testOtherSchemaVersion(t *testing.T, version int) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old := store.KnownSchema(version)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.ExecContext(ctx, old+fmt.Sprintf(`; PRAGMA application_id = 1279607123; PRAGMA user_version = %d;
		INSERT INTO Payments (IdempotencyKey, Amount, CreatedAtUtc) VALUES ('PAY-001', 100, '2026-01-15T09:00:00.000Z');
		INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, CreatedAtUtc) VALUES ('PAY-001', 'PaymentRequested', '{}', '2026-01-15T09:00:00.000Z')`, version))
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(ctx, path)
	if !errors.Is(err, store.ErrOtherVersion) || !strings.Contains(err.Error(), fmt.Sprintf("schema %d", version)) ||
		!strings.Contains(err.Error(), "leaselab seed --reset --db FILE") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open(version %d file) = %v, want ErrOtherVersion naming the file, the version and the fix", version, err)
	}
	db, err := store.CreateWith(ctx, path, store.Options{Reset: true})
	if err != nil {
		t.Fatalf("Create(version %d file) = %v", version, err)
	}
	defer db.Close()
	if rows, _ := db.Snapshot(ctx); len(rows) != 0 {
		t.Fatalf("%d rows after Create, want 0", len(rows))
	}
	raw, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var indexes string
	if err := raw.QueryRowContext(ctx, `SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name)`).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if indexes != "OutboxMessages_Key OutboxMessages_Queue OutboxMessages_Retried" {
		t.Fatalf("the indexes after Create are %q, want this version's", indexes)
	}
	if _, err := store.Open(ctx, path); err != nil {
		t.Fatalf("Open after Create = %v", err)
	}
}

// A worker waiting for the write lock stops when its context ends, long before busy_timeout,
// and its connection is left with no transaction open: its next claim works.
func TestCancelledWaitForWriteLock(t *testing.T) {
	db := newDB(t, 2)
	ctx := context.Background()
	held := takeWriteLock(t, db)
	a := connect(t, db)
	wait, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := a.Claim(wait, claimFor("Worker-A"))
	if err == nil {
		t.Fatal("claim while another connection holds the write lock: want an error")
	}
	if d := time.Since(start); d > store.BusyTimeout/2 {
		t.Fatalf("the cancelled claim returned after %v", d)
	}
	if _, err := held.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	res, err := a.Claim(ctx, claimFor("Worker-A"))
	if err != nil || res.Outcome != engine.ClaimWon {
		t.Fatalf("claim after the lock was released: %+v, %v", res, err)
	}
}
