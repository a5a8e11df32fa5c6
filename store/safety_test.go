package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"leaselab/store"
	"leaselab/store/storetest"
)

// What leaselab does to files that already exist: it recognises its own schemas column by
// column, refuses anything else and any database that holds rows (without Reset), and leaves
// what it refuses byte for byte as it was, with no -wal or -shm beside it.

// exec runs statements on path with a plain connection, as sqlite3 would.
func exec(t *testing.T, path, stmts string) { storetest.ExecFile(t, path, stmts) }

// seededFile is a closed leaselab database of n messages.
func seededFile(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "leaselab.db")
	db, err := store.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SeedBulk(ctx, n, t0); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return path
}

// state is the sha256 of the file and which of its -wal, -shm and -journal exist.
func state(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("%x", sha256.Sum256(data))
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			s += " " + suffix
		}
	}
	return s
}

func TestInspectReadsWithoutLeavingFiles(t *testing.T) {
	path := seededFile(t, 5)
	until := store.FormatTime(time.Now().Add(time.Hour))
	exec(t, path, "UPDATE OutboxMessages SET Status = 'Processing', LockedBy = 'Worker-A', LockedUntilUtc = '"+until+"' WHERE Id <= 2")
	before := state(t, path)
	ins, err := store.Inspect(context.Background(), path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := store.Contents{Payments: 5, Messages: 5, LiveLeases: 2}
	if ins.Kind != store.KindCurrent || ins.Version != 6 || ins.Contents != want || !ins.Exists {
		t.Fatalf("Inspect = %+v, want current, version 6, %+v", ins, want)
	}
	// An hour later the leases are over: no live lease.
	ins, err = store.Inspect(context.Background(), path, time.Now().Add(2*time.Hour))
	if err != nil || ins.Contents.LiveLeases != 0 {
		t.Fatalf("two hours later: %+v %v, want no live lease", ins, err)
	}
	if after := state(t, path); after != before {
		t.Fatalf("Inspect changed the file: %s -> %s", before, after)
	}
}

func TestCreateRefusesRowsWithoutReset(t *testing.T) {
	ctx := context.Background()
	path := seededFile(t, 50)
	before := state(t, path)
	_, err := store.CreateWith(ctx, path, store.Options{})
	var held *store.HoldsRowsError
	if !errors.As(err, &held) || !errors.Is(err, store.ErrHoldsRows) || held.Contents.Messages != 50 ||
		!strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "holds 50 messages: pass --reset") {
		t.Fatalf("Create(50 rows) = %v, want a HoldsRowsError naming the file, the rows and --reset", err)
	}
	if after := state(t, path); after != before {
		t.Fatalf("refused, yet changed: %s -> %s", before, after)
	}
	db, err := store.CreateWith(ctx, path, store.Options{Reset: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if rows, _ := db.Snapshot(ctx); len(rows) != 0 {
		t.Fatalf("%d rows after Reset, want 0", len(rows))
	}
}

func TestContentsSaysWhatIsHeld(t *testing.T) {
	for _, c := range []struct {
		in   store.Contents
		want string
	}{
		{store.Contents{Payments: 1, Messages: 1}, "1 message"},
		{store.Contents{Payments: 50, Messages: 50, LiveLeases: 2}, "50 messages, 2 under a live lease"},
		{store.Contents{Payments: 3}, "3 payments"},
		{store.Contents{Payments: 4, Messages: 3, LiveLeases: 1}, "3 messages, 4 payments, 1 under a live lease"},
	} {
		if got := c.in.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.in, got, c.want)
		}
	}
	if err := store.MayReset(store.Contents{}, 0, false); err != nil {
		t.Errorf("MayReset(empty) = %v, want nil", err)
	}
	if err := store.MayReset(store.Contents{Messages: 1, Payments: 1}, 0, true); err != nil {
		t.Errorf("MayReset(rows, reset) = %v, want nil", err)
	}
	err := store.MayReset(store.Contents{Messages: 2, Payments: 2}, 1, false)
	if err == nil || !strings.Contains(err.Error(), "schema 1 (this leaselab uses 6) and holds 2 messages") {
		t.Errorf("MayReset(older, rows) = %v", err)
	}
}

// Every change to leaselab's schema makes a file that is not leaselab's: refused, even with
// Reset, and left as it was.
func TestAlteredSchemasAreNotOurs(t *testing.T) {
	for _, c := range []struct{ name, alter, want string }{
		{"drop column", "ALTER TABLE OutboxMessages DROP COLUMN LockedBy", "it has no column OutboxMessages.LockedBy"},
		{"add column", "ALTER TABLE Payments ADD COLUMN Note TEXT", "it has a column Payments.Note, which leaselab does not create"},
		{"rename column", "ALTER TABLE Payments RENAME COLUMN Amount TO Cents", "it has no column Payments.Amount"},
		{"drop index", "DROP INDEX OutboxMessages_Key", "it has no index OutboxMessages_Key"},
		{"extra index", "CREATE INDEX Mine ON Payments (Amount)", "it has an index Mine"},
		{"other index condition", "DROP INDEX OutboxMessages_Retried; CREATE INDEX OutboxMessages_Retried ON OutboxMessages (CreatedAtUtc) WHERE Status IN ('Pending', 'Processing')",
			"the definition of index OutboxMessages_Retried differs"},
		{"view", "CREATE VIEW Pending AS SELECT * FROM OutboxMessages", "it has a view Pending"},
		{"trigger", "CREATE TRIGGER t AFTER INSERT ON Payments BEGIN SELECT 1; END", "it has a trigger t"},
		{"extra table", "CREATE TABLE Notes (x)", "it has a table Notes"},
		{"application_id", "PRAGMA application_id = 7", "but application_id 7 and user_version 6"},
		{"user_version", "PRAGMA user_version = 1", "application_id 1279607123 and user_version 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := seededFile(t, 3)
			exec(t, path, c.alter)
			before := state(t, path)
			for _, reset := range []bool{false, true} {
				_, err := store.CreateWith(context.Background(), path, store.Options{Reset: reset})
				if !errors.Is(err, store.ErrNotOurs) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("CreateWith(reset=%v) = %v, want ErrNotOurs saying %q", reset, err, c.want)
				}
			}
			if _, err := store.Open(context.Background(), path); !errors.Is(err, store.ErrNotOurs) {
				t.Fatalf("Open = %v, want ErrNotOurs", err)
			}
			if after := state(t, path); after != before {
				t.Fatalf("refused, yet changed: %s -> %s", before, after)
			}
		})
	}
}

// A foreign database that claims leaselab's application_id and user_version keeps its tables.
func TestForeignDatabaseWithOurApplicationID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "books.db")
	exec(t, path, `PRAGMA application_id = 1279607123; PRAGMA user_version = 2;
		CREATE TABLE Payments (Id INTEGER PRIMARY KEY, Payee TEXT); INSERT INTO Payments (Payee) VALUES ('rent')`)
	before := state(t, path)
	_, err := store.CreateWith(context.Background(), path, store.Options{Reset: true})
	if !errors.Is(err, store.ErrNotOurs) {
		t.Fatalf("CreateWith(foreign, reset) = %v, want ErrNotOurs", err)
	}
	if after := state(t, path); after != before {
		t.Fatalf("the foreign database changed: %s -> %s", before, after)
	}
}

// An SQLite database with nothing in it holds nothing to lose: Create makes the schema. One
// another program has marked as its own is refused.
func TestEmptySQLiteDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "empty.db")
	exec(t, path, "PRAGMA journal_mode = WAL")
	db, err := store.Create(ctx, path)
	if err != nil {
		t.Fatalf("Create(empty SQLite database) = %v", err)
	}
	db.Close()
	marked := filepath.Join(t.TempDir(), "marked.db")
	exec(t, marked, "PRAGMA application_id = 42; PRAGMA journal_mode = WAL")
	before := state(t, marked)
	if _, err := store.Create(ctx, marked); !errors.Is(err, store.ErrNotOurs) {
		t.Fatalf("Create(another program's empty database) = %v, want ErrNotOurs", err)
	}
	if after := state(t, marked); after != before {
		t.Fatal("changed")
	}
}

func TestCreateMakesMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	db, err := store.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, m)
		}
	}
}

func TestMissingFolderIsNamed(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "not", "there")
	path := filepath.Join(dir, "x.db")
	_, err := store.Create(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "the folder "+dir+" does not exist: create it first (mkdir -p "+dir+")") {
		t.Fatalf("Create in a missing folder = %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("Create made %v", entries)
	}
}

// The watch's database: mode=ro, no journal_mode. A journal_mode=delete file stays so, and a
// write through it fails.
func TestOpenReadOnlyLeavesJournalMode(t *testing.T) {
	ctx := context.Background()
	path := seededFile(t, 4)
	exec(t, path, "PRAGMA journal_mode = DELETE")
	before := state(t, path)
	db, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Snapshot(ctx)
	if err != nil || len(rows) != 4 {
		t.Fatalf("Snapshot = %d rows, %v", len(rows), err)
	}
	if _, err := db.Counts(ctx); err != nil {
		t.Fatalf("Counts = %v", err)
	}
	if err := db.SeedBulk(ctx, 1, t0); err == nil {
		t.Fatal("a write through OpenReadOnly succeeded")
	}
	db.Close()
	if after := state(t, path); after != before {
		t.Fatalf("the read-only open changed the file: %s -> %s", before, after)
	}
}

// An older leaselab schema (schema_v1.sql, as leaselab of that version made it) is recognised:
// refused with rows, rebuilt with Reset, and rebuilt without when it is empty.
func TestOlderSchemaRecognisedAndRebuilt(t *testing.T) {
	ctx := context.Background()
	v1, err := os.ReadFile("schema_v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range []int{0, 2} {
		path := filepath.Join(t.TempDir(), "v1.db")
		stmts := string(v1) + "; PRAGMA application_id = 1279607123; PRAGMA user_version = 1;"
		for i := 1; i <= rows; i++ {
			stmts += fmt.Sprintf(`INSERT INTO Payments (IdempotencyKey, Amount, CreatedAtUtc) VALUES ('PAY-%03d', 1, 'x');
				INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, CreatedAtUtc) VALUES ('PAY-%03d', 't', '{}', 'x');`, i, i)
		}
		exec(t, path, stmts)
		ins, err := store.Inspect(ctx, path, time.Now())
		if err != nil || ins.Kind != store.KindOlder || ins.Version != 1 || ins.Contents.Messages != rows {
			t.Fatalf("Inspect(v1, %d rows) = %+v, %v", rows, ins, err)
		}
		if rows > 0 {
			before := state(t, path)
			if _, err := store.CreateWith(ctx, path, store.Options{}); !errors.Is(err, store.ErrHoldsRows) {
				t.Fatalf("Create(v1 with rows) = %v, want ErrHoldsRows", err)
			}
			if after := state(t, path); after != before {
				t.Fatal("refused, yet changed")
			}
		}
		db, err := store.CreateWith(ctx, path, store.Options{Reset: rows > 0})
		if err != nil {
			t.Fatalf("CreateWith(v1, %d rows) = %v", rows, err)
		}
		db.Close()
		if ins, err := store.Inspect(ctx, path, time.Now()); err != nil || ins.Kind != store.KindCurrent || !ins.Contents.Empty() {
			t.Fatalf("after the rebuild: %+v, %v", ins, err)
		}
	}
}

// A --db that is not a regular file is named for what it is, and nothing is opened.
func TestInspectNamesWhatIsNotAFile(t *testing.T) {
	for path, want := range map[string]string{
		t.TempDir(): "is a directory, not a database file",
		"/dev/null": "is a character device (a terminal or /dev/null, say), not a database file",
	} {
		_, err := store.Inspect(context.Background(), path, time.Now())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Inspect(%s) = %v, want %q", path, err, want)
		}
	}
}
