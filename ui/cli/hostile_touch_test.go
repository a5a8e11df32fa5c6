package cli

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// walNoShm is a leaselab database of 50 messages with a -wal that holds committed pages and no
// -shm, as a copy taken while a program had it open leaves it (or a crash on a machine that
// lost /dev/shm): the db and -wal files copied while a connection was open.
func walNoShm(t *testing.T, dir string) string { return walCopy(t, dir, false) }

// walCopy is walNoShm, with the -shm copied too when shm is set: all three files, as a crash
// leaves them.
func walCopy(t *testing.T, dir string, shm bool) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	live := seeded(t, src, "pay.db", 50)
	path := filepath.Join(dir, "pay.db")
	suffixes := []string{"", "-wal"}
	if shm {
		suffixes = append(suffixes, "-shm")
	}
	copyMidWrite(t, "file:"+live+"?_pragma=journal_mode(WAL)", false, "PRAGMA wal_autocheckpoint = 0; UPDATE Payments SET Amount = Amount + 1", live, path, suffixes...)
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the copy has no -wal with pages: %v", err)
	}
	return path
}

// refusedHolding50 are run and seed on FILE, a database of 50 messages that mk makes as its
// files say: both refuse it, and leave it as it was.
func refusedHolding50(mk func(t *testing.T, dir string) string, files string) []hostileCase {
	var cases []hostileCase
	for _, args := range [][]string{{"run", "after", "--db", "FILE", "--report-dir", ""}, {"seed", "--db", "FILE"}} {
		cases = append(cases, hostileCase{name: args[0] + " --db FILE holding 50 messages, " + files, setup: at(mk, args...),
			code: exitEnvError, msg: "holds 50 messages: pass --reset", unchanged: true})
	}
	return cases
}

// A refusal touches nothing, not even by creating a -shm: today "run --db F" on a file with a
// leftover -wal and no -shm exits 3 but leaves F-shm behind.
func TestHostileRefusalsTouchNothing(t *testing.T) {
	runHostile(t, "database", append(refusedHolding50(walNoShm, "a -wal and no -shm"),
		hostileCase{name: "watch --db FILE with a -wal and no -shm, no terminal", setup: at(walNoShm, "watch", "--db", "FILE"),
			code: exitUsage, msg: "watch needs a terminal", unchanged: true}))
}

// The watch on a checkpointed file (no -wal, no -shm: every writer has closed it) reads it and
// leaves it as it found it. Today its reads create both and leave them behind. With a writer
// still using the file, its -wal and -shm stay, and the writer goes on.
func TestWatchLeavesACheckpointedFileAsItWas(t *testing.T) {
	ctx := context.Background()
	path := seeded(t, t.TempDir(), "pay.db", 20)
	before := fileHashes(t, path)
	if strings.Count(before, "absent") != 3 {
		t.Fatalf("the seeded file is not checkpointed: %s", before)
	}
	db, err := openWatched(ctx, backends(), path) // what leaselab watch opens
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := db.Snapshot(ctx); err != nil || len(rows) != 20 {
		t.Fatalf("the watch read %d rows, %v", len(rows), err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after := fileHashes(t, path)
	if after != before {
		t.Fatalf("after the watch: %s, before: %s", after, before)
	}

	writer, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	writer.SetMaxOpenConns(1)
	if _, err := writer.Exec("UPDATE Payments SET Amount = Amount + 1 WHERE Id = 1"); err != nil {
		t.Fatal(err)
	}
	db, err = openWatched(ctx, backends(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if !fileExists(path+"-wal") || !fileExists(path+"-shm") {
		t.Fatal("the watch removed the -wal or -shm of a writer still using the file")
	}
	if _, err := writer.Exec("UPDATE Payments SET Amount = Amount + 1 WHERE Id = 1"); err != nil {
		t.Fatalf("the writer after the watch closed: %v", err)
	}
	recordReliability(t, "database", "watch on a checkpointed FILE (no -wal, no -shm), opened, read, closed", exitOK,
		"no -wal or -shm left; with a writer on the file, its -wal and -shm kept", hashCell(before, after))
}

func walAndShm(t *testing.T, dir string) string { return walCopy(t, dir, true) }

// A refusal does not rewrite an existing -shm either (today it does, as every reader does).
func TestHostileRefusalsLeaveTheShm(t *testing.T) {
	runHostile(t, "database", refusedHolding50(walAndShm, "with its -wal and -shm"))
}

// Ctrl-C in a big seed says the seed is partial and how much of it the file holds. Today it
// says only "interrupted by SIGINT", and the file holds 190,000 rows nobody was told about.
func TestInterruptedSeedSaysItIsPartial(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	path := filepath.Join(t.TempDir(), "big.db")
	p := startWithTmp(t, "seed", "--db", path, "--messages", "1000000")
	count := func() int {
		var n int
		rawQueryRow(path, "SELECT count(*) FROM Payments", &n)
		return n
	}
	p.waitFor(t, "committed a first chunk", func() bool { return count() > 0 })
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code, stderr := p.exit(t), p.err.String()
	n := count()
	want := fmt.Sprintf("holds the first %d of 1000000 payments; leaselab seed --reset --db %s starts again", n, path)
	if code != 130 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "interrupted by SIGINT") {
		t.Fatalf("exit %d, stderr %q; want 130, %q and the interrupt", code, stderr, want)
	}
	recordReliability(t, "signals", "SIGINT during `seed --messages 1000000`", code,
		strings.ReplaceAll(firstLine(stderr), filepath.Dir(path)+"/", ""), fmt.Sprintf("%d payments kept, as it says", n))
}

// A Processing row whose LockedUntilUtc is not a time: its lease never ends, and a worker
// would poll it for ever ("until -"). The worker and the watch refuse the file, naming the row.
func TestHostileGarbageLease(t *testing.T) {
	garbage := func(t *testing.T, dir string) string {
		path := seeded(t, dir, "pay.db", 6)
		rawExec(t, path, `UPDATE OutboxMessages SET Status = 'Processing', LockedBy = 'Worker-X', LockedUntilUtc = 'soon', Attempts = 1, LeaseVersion = 1 WHERE Id = 3`)
		return path
	}
	runHostile(t, "database", []hostileCase{
		{name: "worker --db FILE with a Processing row whose LockedUntilUtc is 'soon'", setup: at(garbage, "worker", "--db", "FILE", "--name", "P1", "--until-empty"),
			code: exitEnvError, msg: `row PAY-003 is Processing under a lease whose LockedUntilUtc "soon" is not a time`, unchanged: true},
		{name: "watch --db FILE with a Processing row whose LockedUntilUtc is 'soon'", setup: at(garbage, "watch", "--db", "FILE"),
			code: exitEnvError, msg: `row PAY-003 is Processing under a lease whose LockedUntilUtc "soon" is not a time`, unchanged: true},
	})
}

// A LeaseVersion at the int64 maximum: the next claim would overflow the fencing token (today
// the worker stops on a raw scan error with the row left Processing). Refused, naming the row.
func TestHostileMaxedLeaseVersion(t *testing.T) {
	maxed := func(t *testing.T, dir string) string {
		path := seeded(t, dir, "pay.db", 6)
		rawExec(t, path, `UPDATE OutboxMessages SET LeaseVersion = 9223372036854775807 WHERE Id = 2`)
		return path
	}
	runHostile(t, "database", []hostileCase{
		{name: "worker --db FILE with a LeaseVersion at the int64 maximum", setup: at(maxed, "worker", "--db", "FILE", "--name", "P1"),
			code: exitEnvError, msg: "row PAY-002 has a LeaseVersion at the largest integer", unchanged: true},
	})
}
