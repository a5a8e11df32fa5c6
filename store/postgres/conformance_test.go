package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store/postgres"
	"leaselab/store/storetest"
)

// schemas numbers the schemas of one test process, so that parallel packages and runs never
// share one (CreateTemp's name also has the time and the process id).
var schemas atomic.Int64

// newDB makes a fresh schema of its own on the LEASELAB_PG server; Close drops it.
func newDB(t testing.TB) *postgres.DB {
	t.Helper()
	url := storetest.PostgresURL(t)
	db, err := postgres.CreateTemp(context.Background(), url, time.Now(), fmt.Sprintf("t%d_%d", pid, schemas.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

// seededDB is newDB with n seeded payments (PAY-001…).
func seededDB(t testing.TB, n int) *postgres.DB {
	t.Helper()
	db := newDB(t)
	storetest.Seed(t, db, n)
	return db
}

// backend is the PostgreSQL backend for the conformance suite.
var backend = storetest.Backend{
	New: func(t *testing.T) engine.DB { return newDB(t) },
	Exec: func(t *testing.T, db engine.DB, query string) {
		t.Helper()
		exec(t, db.(*postgres.DB), query)
	},
}

// exec runs query in db's schema on a connection of its own.
func exec(t testing.TB, db *postgres.DB, query string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn := storetest.PGConnect(t, db.SchemaName())
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, query, args...); err != nil {
		t.Fatal(err)
	}
}

// TestConformance runs the suite every backend passes on PostgreSQL.
func TestConformance(t *testing.T) { storetest.Run(t, backend) }
