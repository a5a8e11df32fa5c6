package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PGConnect opens a connection of its own to the test server (PostgresURL) with search_path set
// to schema, as psql would have it; the caller closes it.
func PGConnect(t testing.TB, schema string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SET search_path = "+schema); err != nil {
		conn.Close(ctx)
		t.Fatal(err)
	}
	return conn
}

// DropSchemaAtEnd drops schema on the test server at the end of the test, within 30 s: a lock
// held on the schema makes the drop fail after 20 s, reported, rather than hang the test binary.
func DropSchemaAtEnd(t testing.TB, schema string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, PostgresURL(t))
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "SET lock_timeout = '20s'"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
}

// Rows is what both drivers' result sets offer: database/sql's *sql.Rows and pgx.Rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Column reads the one column of every row of rows, in order; an error fails the test. The
// caller closes rows.
func Column[T any](t testing.TB, rows Rows) []T {
	t.Helper()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
