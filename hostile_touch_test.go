package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// walNoShm is a leaselab database of 50 messages with a -wal that holds committed pages and no
// -shm, as a copy taken while a program had it open leaves it (or a crash on a machine that
// lost /dev/shm): the db and -wal files copied while a connection was open.
func walNoShm(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	live := seeded(t, src, "pay.db", 50)
	db, err := sql.Open("sqlite", "file:"+live+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("PRAGMA wal_autocheckpoint = 0; UPDATE Payments SET Amount = Amount + 1"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pay.db")
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, path+suffix, live+suffix)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("the copy has no -wal with pages: %v", err)
	}
	return path
}

// A refusal touches nothing, not even by creating a -shm: today "run --db F" on a file with a
// leftover -wal and no -shm exits 3 but leaves F-shm behind.
func TestHostileRefusalsTouchNothing(t *testing.T) {
	runHostile(t, "database", []hostileCase{
		{name: "run --db FILE holding 50 messages, a -wal and no -shm", setup: at(walNoShm, "run", "after", "--db", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "holds 50 messages: pass --reset", unchanged: true},
		{name: "seed --db FILE holding 50 messages, a -wal and no -shm", setup: at(walNoShm, "seed", "--db", "FILE"),
			code: exitEnvError, msg: "holds 50 messages: pass --reset", unchanged: true},
		{name: "watch --db FILE with a -wal and no -shm, no terminal", setup: at(walNoShm, "watch", "--db", "FILE"),
			code: exitUsage, msg: "watch needs a terminal", unchanged: true},
	})
}
