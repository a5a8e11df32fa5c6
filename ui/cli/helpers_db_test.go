package cli

// The tests' databases: SQLite files changed with a plain connection (as sqlite3 would) and
// copied in the middle of a write, connections of the test's own to the PostgreSQL test server
// (storetest.PostgresURL) or to a server of a test's own, and schemas on the test server, each
// dropped at the test's end.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5"
)

// countsAt opens the database at path with open (store.Open, postgres.Open, …), reads its
// counts, and closes it.
func countsAt[D interface {
	engine.DB
	Close() error
}](t *testing.T, open func(context.Context, string) (D, error), path string) engine.Counts {
	t.Helper()
	ctx := context.Background()
	var c engine.Counts
	db, err := open(ctx, path)
	if err == nil {
		defer db.Close()
		c, err = db.Counts(ctx)
	}
	if err != nil {
		t.Fatalf("the counts of %s: %v", path, err)
	}
	return c
}

// rawExec runs statements on the file with a plain connection (what sqlite3 would do), closed
// before it returns.
func rawExec(t *testing.T, path, stmts string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err == nil {
		defer db.Close()
		_, err = db.Exec(stmts)
	}
	if err != nil {
		t.Fatalf("%s: %v", stmts, err)
	}
}

// rawQueryRow reads one row of query into dest from the file at path, opened read-only with a
// plain connection, closed before it returns.
func rawQueryRow(path, query string, dest ...any) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	return db.QueryRow(query).Scan(dest...)
}

// copyMidWrite copies the database file live, and the files beside it that suffixes name ("" is
// live itself), to path, while a plain connection opened with dsn has run stmts: in a
// transaction it leaves open when inTx is set. The copy is what a process killed there leaves.
func copyMidWrite(t *testing.T, dsn string, inTx bool, stmts, live, path string, suffixes ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var exec interface {
		Exec(query string, args ...any) (sql.Result, error)
	} = db
	if inTx {
		tx, err := db.BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		exec = tx
	}
	if _, err := exec.Exec(stmts); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range suffixes {
		copyFile(t, path+suffix, live+suffix)
	}
}

// pgConnect opens a connection of the test's own to the PostgreSQL server at pgURL; the caller
// closes it.
func pgConnect(t *testing.T, ctx context.Context, pgURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// pgRun runs stmts, in order, on a connection of its own to the server at pgURL, closed before
// it returns.
func pgRun(ctx context.Context, pgURL string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, stmt := range stmts {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// pgStrings is the one text column of the rows query reads on conn.
func pgStrings(t *testing.T, ctx context.Context, conn *pgx.Conn, query string, args ...any) []string {
	t.Helper()
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// pgSchemaURL is the test server's URL with ?schema=name; the schema is dropped at the end.
func pgSchemaURL(t *testing.T, name string) string {
	t.Helper()
	u, err := url.Parse(storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	name = fmt.Sprintf("%s_%d", name, os.Getpid())
	q := u.Query()
	q.Set("schema", name)
	u.RawQuery = q.Encode()
	// Bounded: a session still holding a lock on the schema makes the drop fail in 20 s, reported,
	// rather than hang the test binary.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := pgRun(ctx, storetest.PostgresURL(t), "SET lock_timeout = '20s'", "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return u.String()
}

// pgExec runs statements on the test server with search_path set to schema, as psql would.
func pgExec(t *testing.T, schema, stmts string) {
	t.Helper()
	if err := pgRun(context.Background(), storetest.PostgresURL(t), "SET search_path = "+schema+"; "+stmts); err != nil {
		t.Fatalf("%s: %v", stmts, err)
	}
}

// pgSchemaState is a hash of everything in schema a check could change: its comment, every
// object's kind, name and definition, and every table's rows.
func pgSchemaState(t *testing.T, schema string) string {
	t.Helper()
	ctx := context.Background()
	conn := pgConnect(t, ctx, storetest.PostgresURL(t))
	defer conn.Close(ctx)
	var b strings.Builder
	var tables []string
	for _, s := range pgStrings(t, ctx, conn, `
SELECT 'comment ' || coalesce(obj_description(n.oid, 'pg_namespace'), '') FROM pg_namespace n WHERE n.nspname = $1
UNION ALL SELECT 'relation ' || c.relkind::text || ' ' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
UNION ALL SELECT 'function ' || p.proname || ' ' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
UNION ALL SELECT 'type ' || ty.typname FROM pg_type ty JOIN pg_namespace n ON n.oid = ty.typnamespace WHERE n.nspname = $1
UNION ALL SELECT 'trigger ' || pg_get_triggerdef(tr.oid) FROM pg_trigger tr JOIN pg_class c ON c.oid = tr.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
ORDER BY 1`, schema) {
		b.WriteString(s + "\n")
		if name, ok := strings.CutPrefix(s, "relation r "); ok {
			tables = append(tables, name)
		}
	}
	for _, table := range tables {
		var n int
		var sum *string
		if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*), md5(string_agg(x::text, ',' ORDER BY x::text)) FROM %s.%s x`, schema, table)).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "rows of %s: %d %v\n", table, n, sum != nil && *sum != "")
		if sum != nil {
			b.WriteString(*sum + "\n")
		}
	}
	h := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(h[:8])
}
