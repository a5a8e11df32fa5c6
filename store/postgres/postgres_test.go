package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store/postgres"
	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5"
)

var t0 = engine.Epoch

// withSchema returns the server URL with ?schema=name.
func withSchema(t *testing.T, name string) string {
	t.Helper()
	u, err := url.Parse(storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("schema", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// A schema that holds rows is emptied only with Reset; one with tables leaselab did not make is
// never changed; Open needs a leaselab schema.
func TestCreateRefusesRowsUnlessReset(t *testing.T) {
	ctx := context.Background()
	name := fmt.Sprintf("leaselab_test_reset_%d", pid)
	storetest.DropSchemaAtEnd(t, name)
	raw := withSchema(t, name)
	if _, err := postgres.Open(ctx, raw); err == nil || !strings.Contains(err.Error(), "leaselab seed") {
		t.Fatalf("Open(no such schema) = %v, want an error that says how to make it", err)
	}
	db, err := postgres.Create(ctx, raw, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Seed(ctx, engine.NewGateway(db), 3, t0); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = postgres.Create(ctx, raw, postgres.Options{})
	var env *engine.EnvError
	if !errors.Is(err, postgres.ErrHoldsRows) || !errors.As(err, &env) || !strings.Contains(err.Error(), "--reset") {
		t.Fatalf("Create(schema with rows) = %v, want ErrHoldsRows naming --reset", err)
	}
	shared, err := postgres.Open(ctx, raw)
	if err != nil {
		t.Fatalf("Open(our schema) = %v", err)
	}
	if rows, _ := shared.Snapshot(ctx); len(rows) != 3 {
		t.Fatalf("%d rows after a refused Create, want the 3 seeded", len(rows))
	}
	shared.Close()
	db, err = postgres.Create(ctx, raw, postgres.Options{Reset: true})
	if err != nil {
		t.Fatalf("Create with Reset = %v", err)
	}
	defer db.Close()
	if err := engine.Seed(ctx, engine.NewGateway(db), 1, t0); err != nil {
		t.Fatal(err)
	}
	if rows, _ := db.Snapshot(ctx); len(rows) != 1 || rows[0].ID != 1 {
		t.Fatalf("rows after reset and a new seed = %+v, want one row with Id 1", rows)
	}
}

func TestCreateRefusesForeignSchema(t *testing.T) {
	ctx := context.Background()
	name := fmt.Sprintf("leaselab_test_foreign_%d", pid)
	storetest.DropSchemaAtEnd(t, name)
	conn, err := pgx.Connect(ctx, storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name+"; CREATE TABLE "+name+".orders (id int); INSERT INTO "+name+".orders VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	for _, reset := range []bool{false, true} {
		if _, err := postgres.Create(ctx, withSchema(t, name), postgres.Options{Reset: reset}); !errors.Is(err, postgres.ErrNotOurs) {
			t.Fatalf("Create(foreign schema, reset %v) = %v, want ErrNotOurs", reset, err)
		}
	}
	if _, err := postgres.Open(ctx, withSchema(t, name)); !errors.Is(err, postgres.ErrNotOurs) {
		t.Fatalf("Open(foreign schema) = %v, want ErrNotOurs", err)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+name+".orders").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the foreign table after the refusals: %d rows, %v", n, err)
	}
}

// The URL on screens and in errors never carries the password.
func TestPathHidesThePassword(t *testing.T) {
	for _, raw := range []string{"postgres://alice:s3cret@db.example:5432/app", "postgres://alice@db.example/app?password=s3cret"} {
		if got := postgres.Redact(raw); strings.Contains(got, "s3cret") || !strings.Contains(got, "alice@db.example") {
			t.Errorf("Redact(%q) = %q", raw, got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// A server that is not there: the error names it without the password.
	_, err := postgres.Create(ctx, "postgres://alice:s3cret@127.0.0.1:1/app?connect_timeout=1", postgres.Options{})
	var env *engine.EnvError
	if !errors.As(err, &env) || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Create(no server) = %v, want an EnvError naming the server without the password", err)
	}
	for _, bad := range []string{"postgres://u@h/db?schema=Bad-Name", "postgres://u@h/db?schema=1x"} {
		if _, err := postgres.Create(ctx, bad, postgres.Options{}); err == nil || !strings.Contains(err.Error(), "schema") {
			t.Errorf("Create(%q) = %v, want a schema-name error", bad, err)
		}
	}
}

// CreateTemp's schema is gone after Close.
func TestTempSchemaIsDropped(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.CreateTemp(ctx, storetest.PostgresURL(t), time.Now(), fmt.Sprintf("drop_%d", pid))
	if err != nil {
		t.Fatal(err)
	}
	name := db.SchemaName()
	if !strings.Contains(db.Path(), "schema="+name) {
		t.Fatalf("Path() = %q, want it to name the schema %s", db.Path(), name)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", name).Scan(&n); err != nil || n != 0 {
		t.Fatalf("schema %s after Close: %d, %v; want gone", name, n, err)
	}
}
