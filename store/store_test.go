package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"

	_ "modernc.org/sqlite"
)

var t0 = engine.Epoch

// newDB creates a database file in a test folder with n seeded payments (PAY-001…).
func newDB(t *testing.T, n int) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Create(ctx, filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		busy, err := db.Checkpoint(ctx)
		if err != nil || busy {
			t.Errorf("final checkpoint: busy=%v err=%v (an unclosed read blocks it)", busy, err)
		}
		db.Close()
	})
	if err := engine.Seed(ctx, engine.NewGateway(db), n, t0); err != nil {
		t.Fatal(err)
	}
	return db
}

func connect(t *testing.T, db *store.DB) engine.Conn {
	t.Helper()
	c, err := db.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// claimFor is worker's claim of the oldest claimable message at t0, with a one-second lease.
func claimFor(worker string) engine.ClaimRequest {
	return engine.ClaimRequest{Worker: worker, Now: t0, Until: t0.Add(time.Second)}
}

func rowByKey(t *testing.T, db *store.DB, key string) engine.Row {
	t.Helper()
	rows, err := db.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.IdempotencyKey == key {
			return r
		}
	}
	t.Fatalf("no row %s", key)
	return engine.Row{}
}

func TestClaimTakesOldestAndSetsLease(t *testing.T) {
	db := newDB(t, 3)
	c := connect(t, db)
	res, err := c.Claim(context.Background(), engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0.Add(500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != engine.ClaimWon || res.Message.IdempotencyKey != "PAY-001" || res.Message.LeaseVersion != 1 {
		t.Fatalf("claim = %+v, want PAY-001 won at v1", res)
	}
	r := rowByKey(t, db, "PAY-001")
	if r.Status != engine.StatusProcessing || r.LockedBy != "Worker-A" || !r.LockedUntil.Equal(t0.Add(500*time.Millisecond)) || r.Attempts != 1 {
		t.Fatalf("row after claim = %+v", r)
	}
}

// The lease is live up to and including LockedUntilUtc, and claimable 1 ms later.
func TestClaimBoundaryAtExactlyLockedUntil(t *testing.T) {
	db := newDB(t, 1)
	a, b := connect(t, db), connect(t, db)
	ctx := context.Background()
	until := t0.Add(500 * time.Millisecond)
	if res, err := a.Claim(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: until}); err != nil || res.Outcome != engine.ClaimWon {
		t.Fatalf("A claim: %+v %v", res, err)
	}
	res, err := b.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: until, Until: until.Add(500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != engine.ClaimBlocked || res.PrevOwner != "Worker-A" || !res.PrevUntil.Equal(until) {
		t.Fatalf("claim at exactly LockedUntilUtc = %+v, want blocked by Worker-A", res)
	}
	res, err = b.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: until.Add(time.Millisecond), Until: until.Add(501 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != engine.ClaimWon || res.PrevOwner != "Worker-A" || res.Message.LeaseVersion != 2 {
		t.Fatalf("claim 1 ms after LockedUntilUtc = %+v, want a reclaim at v2", res)
	}
	if r := rowByKey(t, db, "PAY-001"); r.LockedBy != "Worker-B" {
		t.Fatalf("LockedBy = %q, want Worker-B", r.LockedBy)
	}
}

func TestKeyedClaimBlockedThenEmpty(t *testing.T) {
	db := newDB(t, 2)
	a, b := connect(t, db), connect(t, db)
	ctx := context.Background()
	won, err := a.Claim(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0.Add(time.Second), Key: "PAY-002"})
	if err != nil || won.Outcome != engine.ClaimWon || won.Message.IdempotencyKey != "PAY-002" {
		t.Fatalf("keyed claim: %+v %v", won, err)
	}
	if res, _ := b.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: t0, Until: t0.Add(time.Second), Key: "PAY-002"}); res.Outcome != engine.ClaimBlocked {
		t.Fatalf("second keyed claim = %v, want blocked", res.Outcome)
	}
	fin, err := a.Finalize(ctx, engine.FinalizeRequest{Worker: "Worker-A", Message: won.Message, Now: t0, PaymentStatus: engine.PaymentPaid, TransactionID: "txn_1", OwnershipCheck: true})
	if err != nil || !fin.Committed {
		t.Fatalf("finalize: %+v %v", fin, err)
	}
	if res, _ := b.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: t0, Until: t0.Add(time.Second), Key: "PAY-002"}); res.Outcome != engine.ClaimEmpty {
		t.Fatalf("claim of a Processed message = %v, want empty", res.Outcome)
	}
	if _, err := b.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: t0, Until: t0, Key: "PAY-999"}); err == nil {
		t.Fatal("claim of an unknown key: want an error")
	}
}

// A finalize by a worker that does not own the row changes nothing: the payment update in the
// same transaction is rolled back.
func TestFinalizeByNonOwnerChangesNothing(t *testing.T) {
	db := newDB(t, 1)
	a, b := connect(t, db), connect(t, db)
	ctx := context.Background()
	won, err := a.Claim(ctx, claimFor("Worker-A"))
	if err != nil || won.Outcome != engine.ClaimWon {
		t.Fatal(won, err)
	}
	before := rowByKey(t, db, "PAY-001")
	res, err := b.Finalize(ctx, engine.FinalizeRequest{Worker: "Worker-B", Message: won.Message, Now: t0,
		PaymentStatus: engine.PaymentPaid, TransactionID: "txn_stolen", OwnershipCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed || res.RowsAffected != 0 || res.PriorOwner != "Worker-A" {
		t.Fatalf("non-owner finalize = %+v, want rolled back with 0 rows", res)
	}
	if after := rowByKey(t, db, "PAY-001"); after != before {
		t.Fatalf("row changed by a rejected finalize:\nbefore %+v\nafter  %+v", before, after)
	}
	if r := rowByKey(t, db, "PAY-001"); r.PaymentStatus != engine.PaymentPending || r.TransactionID != "" {
		t.Fatalf("payment = %s %q, want Pending with no transaction id (rolled back)", r.PaymentStatus, r.TransactionID)
	}
	// Without the check the same statement goes through: that is the bug the check prevents.
	res, err = b.Finalize(ctx, engine.FinalizeRequest{Worker: "Worker-B", Message: won.Message, Now: t0,
		PaymentStatus: engine.PaymentPaid, TransactionID: "txn_stolen"})
	if err != nil || !res.Committed {
		t.Fatalf("unchecked finalize = %+v %v, want committed", res, err)
	}
}

func TestFencingRejectsStaleVersion(t *testing.T) {
	db := newDB(t, 1)
	a := connect(t, db)
	ctx := context.Background()
	first, _ := a.Claim(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0.Add(time.Millisecond)})
	later := t0.Add(10 * time.Millisecond)
	second, _ := a.Claim(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: later, Until: later.Add(time.Second)})
	if second.Outcome != engine.ClaimWon || second.Message.LeaseVersion != 2 {
		t.Fatalf("second claim = %+v", second)
	}
	req := engine.FinalizeRequest{Worker: "Worker-A", Message: first.Message, Now: later, PaymentStatus: engine.PaymentPaid, TransactionID: "t", OwnershipCheck: true, Fencing: true}
	if res, err := a.Finalize(ctx, req); err != nil || res.Committed {
		t.Fatalf("stale finalize with fencing = %+v %v, want rejected", res, err)
	}
	req.Fencing = false
	if res, err := a.Finalize(ctx, req); err != nil || !res.Committed || res.PriorVersion != 2 {
		t.Fatalf("stale finalize without fencing = %+v %v, want committed over v2", res, err)
	}
}

// Two connections race for one message: exactly one claim wins.
func TestTwoConnectionsRaceOneClaim(t *testing.T) {
	for round := 0; round < 20; round++ {
		db := newDB(t, 1)
		conns := []engine.Conn{connect(t, db), connect(t, db)}
		var wg sync.WaitGroup
		results := make([]engine.ClaimResult, 2)
		errs := make([]error, 2)
		start := make(chan struct{})
		for i := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = conns[i].Claim(context.Background(), engine.ClaimRequest{
					Worker: []string{"Worker-A", "Worker-B"}[i], Now: t0, Until: t0.Add(time.Second)})
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for i := range results {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if results[i].Outcome == engine.ClaimWon {
				won++
			} else if results[i].Outcome != engine.ClaimBlocked {
				t.Fatalf("loser outcome = %v, want blocked", results[i].Outcome)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d claims won, want exactly 1", round, won)
		}
	}
}

// The non-atomic claim is a plain read then an unconditional update: both workers can take the
// same row. This is what the naive-claim lesson shows.
func TestNonAtomicClaimLetsBothTake(t *testing.T) {
	db := newDB(t, 1)
	a, b := connect(t, db), connect(t, db)
	ctx := context.Background()
	ma, okA, _ := a.SelectCandidate(ctx, t0)
	mb, okB, _ := b.SelectCandidate(ctx, t0)
	if !okA || !okB || ma.ID != mb.ID {
		t.Fatal("both selects should see the same candidate")
	}
	ta, err := take(a, ma.ID, "Worker-A", t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := take(b, mb.ID, "Worker-B", t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if ta.LeaseVersion != 1 || tb.LeaseVersion != 2 || rowByKey(t, db, "PAY-001").LockedBy != "Worker-B" {
		t.Fatalf("takes: A v%d, B v%d", ta.LeaseVersion, tb.LeaseVersion)
	}
}

// The non-atomic take overwrites whatever the row has become since its select, even a row another
// worker has finalized meanwhile: the double processing the naive-claim lesson shows. The take
// makes the row unfinished again (ProcessedAtUtc NULL), as the schema's CHECK requires.
func TestNonAtomicTakeAfterAnotherFinalized(t *testing.T) {
	db := newDB(t, 1)
	a, b := connect(t, db), connect(t, db)
	ctx := context.Background()
	ma, _, _ := a.SelectCandidate(ctx, t0)
	mb, _, _ := b.SelectCandidate(ctx, t0)
	ta, err := take(a, ma.ID, "Worker-A", t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	fin, err := a.Finalize(ctx, paid("Worker-A", ta))
	if err != nil || !fin.Committed {
		t.Fatalf("A's finalize: %+v, %v", fin, err)
	}
	tb, err := take(b, mb.ID, "Worker-B", t0.Add(time.Second))
	if err != nil {
		t.Fatalf("B's take of the row A finalized: %v", err)
	}
	if r := rowByKey(t, db, "PAY-001"); r.Status != engine.StatusProcessing || r.LockedBy != "Worker-B" || r.ProcessedAt != (time.Time{}) {
		t.Fatalf("after B's take: %+v", r)
	}
	fin, err = b.Finalize(ctx, paid("Worker-B", tb))
	if err != nil || !fin.Committed {
		t.Fatalf("B's finalize: %+v, %v", fin, err)
	}
}

func TestRenewOnlyByOwner(t *testing.T) {
	db := newDB(t, 1)
	a := connect(t, db)
	ctx := context.Background()
	won, _ := a.Claim(ctx, claimFor("Worker-A"))
	if ok, err := renew(a, won.Message, "Worker-A", t0.Add(2*time.Second)); !ok || err != nil {
		t.Fatalf("owner renew = %v %v", ok, err)
	}
	if ok, _ := renew(a, won.Message, "Worker-B", t0.Add(3*time.Second)); ok {
		t.Fatal("renew by a non-owner succeeded")
	}
	if r := rowByKey(t, db, "PAY-001"); !r.LockedUntil.Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("LockedUntil = %v", r.LockedUntil)
	}
}

// The claim's candidate query must be an ordered scan of the partial index that stops at the
// first claimable row: no full scan, no temporary B-tree for ORDER BY.
func TestClaimQueryPlanUsesIndex(t *testing.T) {
	db := newDB(t, 50)
	got := queryPlan(t, db, store.ClaimCandidateSQL, sql.Named("now", store.FormatTime(t0)))
	if got != "SCAN OutboxMessages USING INDEX OutboxMessages_Claimable" {
		t.Fatalf("claim plan:\n%s\nwant: SCAN OutboxMessages USING INDEX OutboxMessages_Claimable", got)
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

// A leaselab database of another schema version (here: version 1, whose claim index was on
// Status) is refused by Open, which says so and what to do, and rebuilt by Create with Reset.
func TestOtherSchemaVersion(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	v1, err := os.ReadFile("schema_v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.ExecContext(ctx, string(v1)+`; PRAGMA application_id = 1279607123; PRAGMA user_version = 1;
		INSERT INTO Payments (IdempotencyKey, Amount, CreatedAtUtc) VALUES ('PAY-001', 100, '2026-01-15T09:00:00.000Z');
		INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, CreatedAtUtc) VALUES ('PAY-001', 'PaymentRequested', '{}', '2026-01-15T09:00:00.000Z')`)
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(ctx, path)
	if !errors.Is(err, store.ErrOtherVersion) || !strings.Contains(err.Error(), "schema 1") ||
		!strings.Contains(err.Error(), "leaselab seed --reset --db FILE") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open(version 1 file) = %v, want ErrOtherVersion naming the file, the version and the fix", err)
	}
	db, err := store.CreateWith(ctx, path, store.Options{Reset: true})
	if err != nil {
		t.Fatalf("Create(version 1 file) = %v", err)
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
	var where string
	if err := raw.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = 'OutboxMessages_Claimable'`).Scan(&where); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(where, "ProcessedAtUtc IS NULL") {
		t.Fatalf("the claim index after Create is %q, want this version's", where)
	}
	if _, err := store.Open(ctx, path); err != nil {
		t.Fatalf("Open after Create = %v", err)
	}
}

func TestCountsSeeDuplicatesAndTransactionIDs(t *testing.T) {
	db := newDB(t, 6)
	c, err := db.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Messages != 6 || c.OutboxPending != 6 || c.PaymentsPending != 6 || c.DuplicateRows != 0 || c.MaxOutboxPerKey != 1 {
		t.Fatalf("counts = %+v", c)
	}
}

// A worker waiting for the write lock stops when its context ends, long before busy_timeout,
// and its connection is left with no transaction open: its next claim works.
func TestCancelledWaitForWriteLock(t *testing.T) {
	db := newDB(t, 2)
	ctx := context.Background()
	u := url.URL{Scheme: "file", OmitHost: true, Path: db.Path()}
	holder, err := sql.Open("sqlite", u.String()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	held, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := held.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	a := connect(t, db)
	wait, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = a.Claim(wait, claimFor("Worker-A"))
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
