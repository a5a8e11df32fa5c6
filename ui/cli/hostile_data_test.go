package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"leaselab/store"
)

// Hostile databases: files that hold rows, altered or foreign schemas, older versions, hot
// journals, missing folders. Whatever leaselab refuses it leaves byte for byte as it was, with
// no -wal or -shm beside it.

// leased is a seeded database of n messages, live of them under a lease that ends in an hour,
// as a running worker process would leave them.
func leased(t *testing.T, dir string, n, live int) string {
	path := seeded(t, dir, "shared.db", n)
	until := store.FormatTime(time.Now().Add(time.Hour))
	rawExec(t, path, fmt.Sprintf(`UPDATE OutboxMessages SET Status = 'Processing', LockedBy = 'Worker-P1',
		LockedUntilUtc = '%s', Attempts = 1, LeaseVersion = 1 WHERE Id <= %d`, until, live))
	return path
}

// altered is a leaselab database whose 20 messages are all Processed, then altered by alter.
func altered(t *testing.T, dir, alter string) string {
	path := seeded(t, dir, "altered.db", 20)
	rawExec(t, path, `UPDATE OutboxMessages SET Status = 'Processed', ProcessedAtUtc = CreatedAtUtc;`+alter)
	return path
}

// foreign is another program's database that claims leaselab's application_id and user_version,
// with a Payments table of its own, in rollback-journal mode.
func foreign(t *testing.T, dir string, version int) string {
	path := filepath.Join(dir, "books.db")
	rawExec(t, path, fmt.Sprintf(`PRAGMA journal_mode = DELETE; PRAGMA application_id = 1279607123; PRAGMA user_version = %d;
		CREATE TABLE Payments (Id INTEGER PRIMARY KEY, Payee TEXT, Cents INTEGER);
		INSERT INTO Payments (Payee, Cents) VALUES ('rent', 120000), ('power', 8150)`, version))
	return path
}

// olderVersion is a leaselab database of schema 1 (as leaselab of that version made it) holding
// rows messages.
func olderVersion(t *testing.T, dir string, rows int) string {
	v1, err := os.ReadFile(filepath.Join("..", "..", "store", "schema_v1.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "v1.db")
	stmts := string(v1) + "; PRAGMA journal_mode = WAL; PRAGMA application_id = 1279607123; PRAGMA user_version = 1;"
	for i := 1; i <= rows; i++ {
		stmts += fmt.Sprintf(`INSERT INTO Payments (IdempotencyKey, Amount, CreatedAtUtc) VALUES ('PAY-%03d', 100, '2026-01-15T09:00:00.000Z');
			INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, CreatedAtUtc) VALUES ('PAY-%03d', 'PaymentRequested', '{}', '2026-01-15T09:00:00.000Z');`, i, i)
	}
	rawExec(t, path, stmts)
	return path
}

// deleteMode is a leaselab database switched to journal_mode=DELETE, as a user of sqlite3 may.
func deleteMode(t *testing.T, dir string) string {
	path := seeded(t, dir, "delete.db", 6)
	rawExec(t, path, "PRAGMA journal_mode = DELETE")
	return path
}

// hotJournal is a database with a hot journal beside it: a copy of the file and its journal
// taken while a write transaction was spilling to disk, as a process killed there leaves them.
func hotJournal(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	live := filepath.Join(src, "hot.db")
	rawExec(t, live, "PRAGMA journal_mode = DELETE; CREATE TABLE x (a); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 300) INSERT INTO x SELECT randomblob(1000) FROM n")
	path := filepath.Join(dir, "hot.db")
	copyMidWrite(t, live, true, "PRAGMA cache_size = 2; UPDATE x SET a = randomblob(1000)", live, path, "", "-journal")
	return path
}

// at returns a setup that runs args with FILE replaced by the file make returns.
func at(mk func(t *testing.T, dir string) string, args ...string) func(t *testing.T, dir string) ([]string, string) {
	return func(t *testing.T, dir string) ([]string, string) {
		path := mk(t, dir)
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = strings.ReplaceAll(a, "FILE", path)
		}
		return out, path
	}
}

func TestHostileDatabases(t *testing.T) {
	fifty := func(t *testing.T, dir string) string { return seeded(t, dir, "pay.db", 50) }
	live := func(t *testing.T, dir string) string { return leased(t, dir, 50, 2) }
	dropCol := func(t *testing.T, dir string) string {
		return altered(t, dir, "ALTER TABLE OutboxMessages DROP COLUMN LockedBy")
	}
	extraTable := func(t *testing.T, dir string) string {
		return altered(t, dir, "CREATE TABLE Notes (Body TEXT); INSERT INTO Notes VALUES ('mine')")
	}
	trigger := func(t *testing.T, dir string) string {
		return altered(t, dir, "CREATE TRIGGER audit AFTER DELETE ON Payments BEGIN SELECT 1; END")
	}
	foreign2 := func(t *testing.T, dir string) string { return foreign(t, dir, 2) }
	foreign1 := func(t *testing.T, dir string) string { return foreign(t, dir, 1) }
	v1rows := func(t *testing.T, dir string) string { return olderVersion(t, dir, 3) }
	noFolder := func(t *testing.T, dir string) string { return filepath.Join(dir, "no", "such", "folder", "x.db") }
	small := []string{"--messages", "20", "--workers", "2"}
	runHostile(t, "database", []hostileCase{
		{name: "run --db FILE holding 50 messages", setup: at(fifty, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "holds 50 messages: pass --reset", unchanged: true},
		{name: "run --db FILE with 2 messages under a live lease", setup: at(live, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "holds 50 messages, 2 under a live lease", unchanged: true},
		{name: "stress --db FILE holding 50 messages", setup: at(fifty, append([]string{"stress", "--db", "FILE"}, small...)...),
			code: exitEnvError, msg: "holds 50 messages", unchanged: true},
		{name: "stress --db FILE with live leases", setup: at(live, append([]string{"stress", "--db", "FILE"}, small...)...),
			code: exitEnvError, msg: "2 under a live lease: some worker may be working on it", unchanged: true},
		{name: "lab --db FILE holding 50 messages", setup: at(fifty, "lab", "--db", "FILE"),
			code: exitEnvError, msg: "holds 50 messages: pass --reset", unchanged: true},
		{name: "seed --db FILE holding 50 messages", setup: at(fifty, "seed", "--db", "FILE"),
			code: exitEnvError, msg: "holds 50 messages: pass --reset", unchanged: true},
		{name: "run --compare --db FILE holding 50 messages", setup: at(fifty, "run", "after", "--compare", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "holds 50 messages", unchanged: true},
		{name: "run --reset --db FILE holding 50 messages", setup: at(fifty, "run", "after", "--reset", "--db", "FILE", "--report-dir", ""),
			code: exitOK, msg: "LEASELAB RUN REPORT: after"},
		{name: "seed --reset --db FILE with live leases", setup: at(live, "seed", "--reset", "--db", "FILE"),
			code: exitOK, msg: "seeded 6 payments"},
		{name: "stress --reset --runs 2 --db FILE holding 50 messages",
			setup: at(fifty, append([]string{"stress", "--reset", "--runs", "2", "--db", "FILE"}, small...)...),
			code:  exitOK, msg: "pass"},
		{name: "lab --reset --db FILE holding 50 messages (checked, then no terminal)", setup: at(fifty, "lab", "--reset", "--db", "FILE"),
			code: exitUsage, msg: "the lab needs a terminal", unchanged: true},
		{name: "run --db FILE altered (drop column LockedBy), 20 Processed rows", setup: at(dropCol, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "not a leaselab database: it has no column OutboxMessages.LockedBy", unchanged: true},
		{name: "seed --db FILE altered (drop column LockedBy)", setup: at(dropCol, "seed", "--db", "FILE"),
			code: exitEnvError, msg: "not a leaselab database", unchanged: true},
		{name: "run --reset --db FILE altered (drop column LockedBy)", setup: at(dropCol, "run", "after", "--reset", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "not a leaselab database", unchanged: true},
		{name: "run --db FILE: leaselab's tables plus a table of the user's", setup: at(extraTable, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "it has a table Notes, which leaselab does not create", unchanged: true},
		{name: "seed --reset --db FILE: leaselab's tables plus a trigger", setup: at(trigger, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "it has a trigger audit", unchanged: true},
		{name: "run --db FILE: foreign database with leaselab's application_id, user_version 2", setup: at(foreign2, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "not a leaselab database", unchanged: true},
		{name: "seed --reset --db FILE: foreign database with leaselab's application_id", setup: at(foreign2, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "not a leaselab database", unchanged: true},
		{name: "run --db FILE: foreign database with leaselab's application_id, user_version 1", setup: at(foreign1, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "not a leaselab database", unchanged: true},
		{name: "worker --db FILE: foreign database with leaselab's application_id", setup: at(foreign2, "worker", "--db", "FILE", "--name", "P1"),
			code: exitEnvError, msg: "not a leaselab database", unchanged: true},
		{name: "lab --db FILE: foreign database", setup: at(foreign2, "lab", "--db", "FILE"),
			code: exitEnvError, msg: "not a leaselab database", unchanged: true},
		{name: "run --db FILE: leaselab schema 1 holding 3 messages", setup: at(v1rows, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "is a leaselab database of schema 1 (this leaselab uses 6) and holds 3 messages: pass --reset", unchanged: true},
		{name: "run --reset --db FILE: leaselab schema 1, rebuilt", setup: at(v1rows, "run", "after", "--reset", "--db", "FILE", "--report-dir", ""),
			code: exitOK, msg: "LEASELAB RUN REPORT: after"},
		{name: "watch --db FILE in journal_mode=delete, no terminal", setup: at(deleteMode, "watch", "--db", "FILE"),
			code: exitUsage, msg: "watch needs a terminal", unchanged: true},
		{name: "run --db FILE in a folder that does not exist", setup: at(noFolder, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "does not exist: create it first (mkdir -p"},
		{name: "seed --db FILE in a folder that does not exist", setup: at(noFolder, "seed", "--db", "FILE"),
			code: exitEnvError, msg: "does not exist: create it first"},
		{name: "lab --db FILE in a folder that does not exist", setup: at(noFolder, "lab", "--db", "FILE"),
			code: exitEnvError, msg: "does not exist: create it first"},
		{name: "watch --db FILE in a folder that does not exist", setup: at(noFolder, "watch", "--db", "FILE"),
			code: exitEnvError, msg: "does not exist: create it first"},
		{name: "worker --db FILE that does not exist", setup: at(func(t *testing.T, dir string) string { return filepath.Join(dir, "none.db") }, "worker", "--db", "FILE", "--name", "P1"),
			code: exitEnvError, msg: "no such file: make it with leaselab seed --db"},
		{name: "watch --db FILE that is empty", setup: at(func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "empty.db")
			os.WriteFile(path, nil, 0o600)
			return path
		}, "watch", "--db", "FILE"),
			code: exitEnvError, msg: "the file is empty; make it with leaselab seed", unchanged: true},
		{name: "watch --db FILE: leaselab schema 1", setup: at(v1rows, "watch", "--db", "FILE"),
			code: exitEnvError, msg: "(schema 1, this leaselab uses 6): make it again with leaselab seed --reset", unchanged: true},
		{name: "run --db FILE with a hot journal", setup: at(hotJournal, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "hot.db-journal is a hot journal", unchanged: true},
		{name: "watch --db FILE with a hot journal", setup: at(hotJournal, "watch", "--db", "FILE"),
			code: exitEnvError, msg: "hot.db-journal is a hot journal", unchanged: true},
	})
}

// The files leaselab makes hold payment data: mode 0600, like the reports.
func TestDatabaseCreatedMode0600(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "after", "--db", filepath.Join(dir, "run.db"), "--report-dir", ""},
		{"seed", "--db", filepath.Join(dir, "seed.db")},
		{"stress", "--messages", "20", "--workers", "2", "--db", filepath.Join(dir, "stress.db")},
	} {
		if code, _, stderr := cli(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		path := args[slices.Index(args, "--db")+1]
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", path, m)
		} else {
			recordReliability(t, "database", args[0]+" --db NEW creates the file", 0, "mode 0600", "—")
		}
	}
}

// A command that re-creates its own --db file (stress --runs, run --compare, the lab's R and
// scenario switch) does so without --reset: the file is the one this process made.
func TestOwnDatabaseIsRecreatedWithoutReset(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"stress", "--runs", "3", "--messages", "30", "--workers", "2", "--db", filepath.Join(dir, "stress.db")},
		{"run", "after", "--compare", "--db", filepath.Join(dir, "compare.db"), "--report-dir", ""},
	} {
		if code, _, stderr := cli(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	// The lab's opener, as R uses it: the second open re-creates the file the first made.
	ctx := context.Background()
	path := filepath.Join(dir, "lab.db")
	dbs := (&scenarioFlags{db: path}).dbs(backends(), false)
	for i := 0; i < 2; i++ {
		if err := dbs.check(ctx); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
		db, _, cleanup, err := dbs.open(ctx)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := db.SeedBulk(ctx, 5, time.Now()); err != nil {
			t.Fatal(err)
		}
		db.Close()
		cleanup()
	}
	// Another file put in its place is not this process's: refused.
	other := seeded(t, t.TempDir(), "other.db", 7)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := dbs.open(ctx); err == nil || !strings.Contains(err.Error(), "holds 7 messages") {
		t.Fatalf("open of a replaced file = %v, want a refusal", err)
	}
}

// run --reset on a leaselab database of schema 1 leaves one of this version, emptied.
func TestOlderVersionRebuiltByRun(t *testing.T) {
	path := olderVersion(t, t.TempDir(), 3)
	if code, _, stderr := cli(t, "run", "after", "--reset", "--db", path, "--report-dir", ""); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ins, err := store.Inspect(context.Background(), path, time.Now())
	if err != nil || ins.Kind != store.KindCurrent || ins.Contents.Messages != 6 {
		t.Fatalf("after run --reset: %+v %v, want this version's schema with the run's 6 messages", ins, err)
	}
}

// The reproduction: run, stress and seed pointed at a database that two worker processes
// are working on. Today they emptied it under the workers (both died: "read row: sql: no rows in
// result set"); now they refuse, naming the live leases, and the workers finish every message.
func TestRefusalWhileWorkerProcessesWork(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	const messages = 8
	path := seeded(t, t.TempDir(), "shared.db", messages)
	// P1 holds every finalize transaction open for half a second: while it does, its message is
	// Processing under a live lease, whatever the scheduler does.
	holder := start(t, "worker", "--db", path, "--name", "P1", "--lease", "10s", "--hold-finalize", "500ms")
	workers := []*child{holder, start(t, "worker", "--db", path, "--name", "P2", "--lease", "10s", "--pace", "20ms")}
	for _, args := range [][]string{
		{"run", "after", "--db", path, "--report-dir", ""},
		{"stress", "--messages", "20", "--db", path},
		{"seed", "--db", path},
	} {
		holder.waitLine(t, "holding its finalize transaction", 30*time.Second)
		code, _, stderr := cli(t, args...)
		if code != exitEnvError || !strings.Contains(stderr, "under a live lease") || !strings.Contains(stderr, "--reset") {
			t.Errorf("%v: exit %d, %q; want exit 3 naming the live leases and --reset", args, code, stderr)
		} else {
			recordReliability(t, "database", args[0]+" --db FILE while 2 worker processes work on it", code, firstLine(stderr), "rows kept; the workers finished every message")
		}
	}
	for _, w := range workers {
		w.finish(t, 60*time.Second)
	}
	ins, err := store.Inspect(context.Background(), path, time.Now())
	if err != nil || ins.Contents.Messages != messages {
		t.Fatalf("after: %+v %v", ins, err)
	}
	if c := countsAt(t, store.OpenReadOnly, path); c.OutboxProcessed != messages {
		t.Fatalf("processed %d of %d", c.OutboxProcessed, messages)
	}
}

// User objects whose names start like SQLite's own ("sqlite_" is reserved, and only that, with
// that case): the schema check must see them, so the file is not leaselab's and is left as it
// was, --reset or not.
func TestHostileSchemaNames(t *testing.T) {
	userTable := func(t *testing.T, dir string) string {
		return altered(t, dir, "CREATE TABLE SqliteUserData (Body TEXT); INSERT INTO SqliteUserData VALUES ('mine')")
	}
	backup := func(t *testing.T, dir string) string {
		return altered(t, dir, "CREATE TABLE sqlitebackup (Body TEXT); INSERT INTO sqlitebackup VALUES ('mine')")
	}
	trigger := func(t *testing.T, dir string) string {
		return altered(t, dir, `CREATE TABLE UserRows (Body TEXT); INSERT INTO UserRows VALUES ('mine');
			CREATE TRIGGER sqliteAudit AFTER INSERT ON OutboxMessages BEGIN DELETE FROM UserRows; END`)
	}
	onlyTrigger := func(t *testing.T, dir string) string {
		return altered(t, dir, `CREATE TRIGGER sqliteAudit AFTER INSERT ON OutboxMessages BEGIN SELECT 1; END`)
	}
	view := func(t *testing.T, dir string) string {
		return altered(t, dir, "CREATE VIEW sqliteV AS SELECT * FROM Payments")
	}
	index := func(t *testing.T, dir string) string {
		return altered(t, dir, "CREATE INDEX sqlite1dx ON Payments(Amount)")
	}
	runHostile(t, "database", []hostileCase{
		{name: "run --db FILE: leaselab's tables plus the user's table SqliteUserData", setup: at(userTable, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "it has a table SqliteUserData, which leaselab does not create", unchanged: true},
		{name: "seed --reset --db FILE: leaselab's tables plus the user's table sqlitebackup", setup: at(backup, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "it has a table sqlitebackup, which leaselab does not create", unchanged: true},
		{name: "seed --reset --db FILE: leaselab's tables plus a trigger sqliteAudit", setup: at(onlyTrigger, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "it has a trigger sqliteAudit, which leaselab does not create", unchanged: true},
		{name: "run --reset --db FILE: a table UserRows and a trigger sqliteAudit", setup: at(trigger, "run", "after", "--reset", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "not a leaselab database", unchanged: true},
		{name: "run --reset --db FILE: leaselab's tables plus a view sqliteV", setup: at(view, "run", "after", "--reset", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "it has a view sqliteV, which leaselab does not create", unchanged: true},
		{name: "seed --reset --db FILE: leaselab's tables plus an index sqlite1dx", setup: at(index, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "it has an index sqlite1dx, which leaselab does not create", unchanged: true},
		{name: "watch --db FILE: leaselab's tables plus a view sqliteV", setup: at(view, "watch", "--db", "FILE"),
			code: exitEnvError, msg: "it has a view sqliteV", unchanged: true},
	})
}

// reserved is altered with objects made under ordinary names, then renamed to names SQLite
// reserves (sqlite_…) through PRAGMA writable_schema, as the hostile run made them: CREATE
// refuses such names, the schema table does not.
func reserved(t *testing.T, dir, create string, renames ...string) string {
	t.Helper()
	path := altered(t, dir, create)
	var b strings.Builder
	b.WriteString("PRAGMA writable_schema = ON;")
	for _, r := range renames {
		from, to, _ := strings.Cut(r, "=")
		fmt.Fprintf(&b, `UPDATE sqlite_schema SET name = '%[2]s', tbl_name = CASE WHEN tbl_name = '%[1]s' THEN '%[2]s' ELSE tbl_name END,
			sql = replace(replace(sql, ' %[1]s ', ' %[2]s '), ' %[1]s(', ' %[2]s(') WHERE name = '%[1]s';
			UPDATE sqlite_schema SET sql = replace(sql, 'INTO %[1]s ', 'INTO %[2]s ') WHERE type = 'trigger';`, from, to)
	}
	b.WriteString("PRAGMA writable_schema = OFF;")
	rawExec(t, path, b.String())
	var ok string
	if err := rawQueryRow(path, "PRAGMA integrity_check", &ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check after the renames: %s %v", ok, err)
	}
	return path
}

// User objects under names SQLite reserves (sqlite_…, written with PRAGMA writable_schema) are
// the user's all the same: the schema check took every name starting with "sqlite_" for
// SQLite's own, so a file holding a table sqlite_log and a trigger sqlite_t on OutboxMessages
// was reset and seeded (seed --reset, run --reset), and the trigger fired on leaselab's writes.
// SQLite's own are only sqlite_sequence, sqlite_stat1 to 4 and the sqlite_autoindex_… indexes.
func TestHostileReservedNames(t *testing.T) {
	logged := func(t *testing.T, dir string) string {
		return reserved(t, dir, `CREATE TABLE log (Key TEXT);
			CREATE TRIGGER t AFTER UPDATE ON OutboxMessages BEGIN INSERT INTO log VALUES (NEW.IdempotencyKey); END`,
			"log=sqlite_log", "t=sqlite_t")
	}
	trigger := func(t *testing.T, dir string) string {
		return reserved(t, dir, `CREATE TRIGGER t AFTER UPDATE ON OutboxMessages BEGIN UPDATE Payments SET Amount = 0; END`, "t=sqlite_t")
	}
	index := func(t *testing.T, dir string) string {
		return reserved(t, dir, `CREATE INDEX ix ON Payments (Amount)`, "ix=sqlite_autoindex_Payments_9")
	}
	view := func(t *testing.T, dir string) string {
		return reserved(t, dir, `CREATE VIEW v AS SELECT * FROM Payments`, "v=sqlite_stat1")
	}
	runHostile(t, "database", []hostileCase{
		{name: "seed --reset --db FILE: a table sqlite_log and a trigger sqlite_t on OutboxMessages (PRAGMA writable_schema)", setup: at(logged, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "it has a table sqlite_log, which leaselab does not create", unchanged: true},
		{name: "run --reset --db FILE: a table sqlite_log and a trigger sqlite_t on OutboxMessages (PRAGMA writable_schema)", setup: at(logged, "run", "after", "--reset", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "it has a table sqlite_log, which leaselab does not create", unchanged: true},
		{name: "run --reset --db FILE: a trigger sqlite_t on OutboxMessages (PRAGMA writable_schema)", setup: at(trigger, "run", "after", "--reset", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "it has a trigger sqlite_t, which leaselab does not create", unchanged: true},
		{name: "seed --reset --db FILE: a user's index named sqlite_autoindex_Payments_9", setup: at(index, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "sqlite_autoindex_Payments_9", unchanged: true},
		{name: "seed --reset --db FILE: a view named sqlite_stat1", setup: at(view, "seed", "--reset", "--db", "FILE"),
			code: exitEnvError, msg: "it has a view sqlite_stat1, which leaselab does not create", unchanged: true},
	})
}
