package store_test

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"

	"leaselab/engine"
	"leaselab/store"
	"leaselab/store/storetest"
)

// sqliteBackend makes fresh database files for the conformance suite. Each is checked at the end
// of its test: a final WAL checkpoint that is blocked means some read was left open.
var sqliteBackend = storetest.Backend{
	New: func(t *testing.T) engine.DB {
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
		return db
	},
	Exec: func(t *testing.T, db engine.DB, query string) {
		t.Helper()
		raw := rawSQL(t, db)
		defer raw.Close()
		if _, err := raw.Exec(query); err != nil {
			t.Fatal(err)
		}
	},
}

// rawSQL opens db's file on a database/sql pool of its own, outside the store, that waits up to
// 5 s for the write lock; the caller closes it.
func rawSQL(t *testing.T, db engine.DB) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", OmitHost: true, Path: db.Path()} // escapes a # in the path
	raw, err := sql.Open("sqlite", u.String()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// takeWriteLock takes db's write lock (BEGIN IMMEDIATE) on a connection outside the store and
// returns that connection; the lock is held until it runs ROLLBACK or the test ends.
func takeWriteLock(t *testing.T, db engine.DB) *sql.Conn {
	t.Helper()
	ctx := context.Background()
	holder := rawSQL(t, db)
	t.Cleanup(func() { holder.Close() })
	held, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	if _, err := held.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return held
}

// TestConformance runs the suite every backend passes on SQLite.
func TestConformance(t *testing.T) { storetest.Run(t, sqliteBackend) }
