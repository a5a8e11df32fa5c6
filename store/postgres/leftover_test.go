package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"leaselab/store/postgres"
	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5"
)

// A run's schema is kept by every other run's sweep while its run lock is held, and dropped by
// the next CreateTemp once the session holding the lock is gone (as when its process was
// killed, or its server restarted), which names it in Swept; the run's own Close then finds it
// gone and says nothing of it (Leftover is nil).
func TestRunLockKeepsALiveSchemaAndFreesALeftOne(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := storetest.PostgresURL(t)
	a, err := postgres.CreateTemp(ctx, url, time.Now(), fmt.Sprintf("locka_%d", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.CreateTemp(ctx, url, time.Now(), fmt.Sprintf("lockb_%d", pid))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(b.Swept(), a.SchemaName()) {
		t.Fatalf("a second run dropped the schema %s of a run still going", a.SchemaName())
	}
	if err := b.Close(); err != nil || b.Leftover() != nil {
		t.Fatalf("Close: %v, Leftover %v", err, b.Leftover())
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exists := func(schema string) bool {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if !exists(a.SchemaName()) {
		t.Fatalf("the schema %s of a run still going is gone", a.SchemaName())
	}
	// The session that holds a's lock ends, as a killed process's does: the server ends it.
	var ended bool
	err = conn.QueryRow(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks
	  WHERE locktype = 'advisory' AND granted AND objsubid = 1
	    AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('leaselab_run:' || $1, 0)`, a.SchemaName()).Scan(&ended)
	if err != nil || !ended {
		t.Fatalf("no session holds the run lock of %s to end: %v", a.SchemaName(), err)
	}
	var c *postgres.DB
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// The terminated backend releases its lock when it has exited: a few milliseconds.
		if c, err = postgres.CreateTemp(ctx, url, time.Now(), fmt.Sprintf("lockc_%d", pid)); err != nil {
			t.Fatal(err)
		}
		// Another package's tests may run on the same server at the same time, and their
		// CreateTemp sweeps too: the schema may go in theirs, not in c's.
		if slices.Contains(c.Swept(), a.SchemaName()) || !exists(a.SchemaName()) || time.Now().After(deadline) {
			break
		}
		c.Close()
	}
	defer c.Close()
	if exists(a.SchemaName()) {
		t.Fatalf("after its session ended, the next run swept %v; %s is still there", c.Swept(), a.SchemaName())
	}
	if err := a.Close(); err != nil || a.Leftover() != nil {
		t.Fatalf("the first run's Close, its schema dropped by the sweep: %v, Leftover %v", err, a.Leftover())
	}
}
