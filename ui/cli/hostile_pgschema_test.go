package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5"
)

// pgExec runs statements on the test server with search_path set to schema, as psql would.
func pgExec(t *testing.T, schema, stmts string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET search_path = "+schema+"; "+stmts); err != nil {
		t.Fatalf("%s: %v", stmts, err)
	}
}

// pgSchemaState is a hash of everything in schema a check could change: its comment, every
// object's kind, name and definition, and every table's rows.
func pgSchemaState(t *testing.T, schema string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var b strings.Builder
	rows, err := conn.Query(ctx, `
SELECT 'comment ' || coalesce(obj_description(n.oid, 'pg_namespace'), '') FROM pg_namespace n WHERE n.nspname = $1
UNION ALL SELECT 'relation ' || c.relkind::text || ' ' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
UNION ALL SELECT 'function ' || p.proname || ' ' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
UNION ALL SELECT 'type ' || ty.typname FROM pg_type ty JOIN pg_namespace n ON n.oid = ty.typnamespace WHERE n.nspname = $1
UNION ALL SELECT 'trigger ' || pg_get_triggerdef(tr.oid) FROM pg_trigger tr JOIN pg_class c ON c.oid = tr.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
ORDER BY 1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		b.WriteString(s + "\n")
		if name, ok := strings.CutPrefix(s, "relation r "); ok {
			tables = append(tables, name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
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

// pgHostile is a setup for a PostgreSQL schema: a leaselab schema seeded with 3 messages (when
// seed is true) or an empty new one, then changed by stmts; it returns the command line with URL
// replaced by the schema's URL, and that URL as the thing that must not change.
func pgHostile(name string, seed bool, stmts string, args ...string) func(t *testing.T, dir string) ([]string, string) {
	return func(t *testing.T, dir string) ([]string, string) {
		u := pgSchemaURL(t, name)
		pu, _ := url.Parse(u)
		schema := pu.Query().Get("schema")
		if seed {
			if code, _, errOut := cli(t, "seed", "--db", u, "--messages", "3"); code != exitOK {
				t.Fatalf("seed: exit %d: %s", code, errOut)
			}
		} else {
			pgExec(t, "public", "CREATE SCHEMA "+schema)
		}
		pgExec(t, schema, stmts)
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = strings.ReplaceAll(a, "URL", u)
		}
		return out, u
	}
}

// A PostgreSQL schema is leaselab's only when it holds what leaselab builds and nothing else:
// any other object makes it another program's, refused unchanged, --reset or not.
func TestHostilePostgresSchemaContents(t *testing.T) {
	const audit = `CREATE TABLE audit (Note text); INSERT INTO audit VALUES ('keep me');
		CREATE FUNCTION wipe() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM audit; RETURN NULL; END $$;
		CREATE TRIGGER wipe AFTER TRUNCATE ON OutboxMessages FOR EACH STATEMENT EXECUTE FUNCTION wipe()`
	t.Cleanup(func() { pgExec(t, "public", "DROP FUNCTION IF EXISTS public.wipe_elsewhere") })
	runHostile(t, "PostgreSQL --db", []hostileCase{
		{name: "seed --reset: leaselab's schema plus a table with rows and an AFTER TRUNCATE trigger", code: exitEnvError,
			msg:   "not a leaselab schema: it holds a function wipe(), which leaselab does not create",
			setup: pgHostile("leaselab_test_truncate", true, audit, "seed", "--reset", "--db", "URL"), unchanged: true},
		{name: "run --reset: leaselab's schema plus an AFTER TRUNCATE trigger only", code: exitEnvError,
			msg: "it holds a trigger wipe on outboxmessages, which leaselab does not create",
			setup: pgHostile("leaselab_test_trigger", true, `CREATE OR REPLACE FUNCTION public.wipe_elsewhere() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
				CREATE TRIGGER wipe AFTER TRUNCATE ON OutboxMessages FOR EACH STATEMENT EXECUTE FUNCTION public.wipe_elsewhere()`,
				"run", "after", "--reset", "--db", "URL", "--report-dir", ""), unchanged: true},
		{name: "seed: a schema holding only a function", code: exitEnvError,
			msg:   "it holds a function total(a integer, b integer), which leaselab does not create",
			setup: pgHostile("leaselab_test_func", false, `CREATE FUNCTION total(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b'`, "seed", "--db", "URL"), unchanged: true},
		{name: "seed --reset: a schema holding only a domain", code: exitEnvError,
			msg:   "it holds a type cents, which leaselab does not create",
			setup: pgHostile("leaselab_test_domain", false, `CREATE DOMAIN cents AS bigint CHECK (VALUE >= 0)`, "seed", "--reset", "--db", "URL"), unchanged: true},
		{name: "seed --reset: a schema holding only an enum type", code: exitEnvError,
			msg:   "it holds a type mood, which leaselab does not create",
			setup: pgHostile("leaselab_test_enum", false, `CREATE TYPE mood AS ENUM ('ok', 'sad')`, "seed", "--reset", "--db", "URL"), unchanged: true},
		{name: "seed --reset: a schema holding only a sequence", code: exitEnvError,
			msg:   "it holds a sequence invoice_no, which leaselab does not create",
			setup: pgHostile("leaselab_test_seq", false, `CREATE SEQUENCE invoice_no`, "seed", "--reset", "--db", "URL"), unchanged: true},
		{name: "seed --reset: leaselab's schema plus a view", code: exitEnvError,
			msg:   "it holds a view paid, which leaselab does not create",
			setup: pgHostile("leaselab_test_view", true, `CREATE VIEW paid AS SELECT * FROM Payments WHERE PaymentStatus = 'Paid'`, "seed", "--reset", "--db", "URL"), unchanged: true},
		{name: "seed --reset: leaselab's schema plus an index", code: exitEnvError,
			msg:   "it holds an index payments_amount, which leaselab does not create",
			setup: pgHostile("leaselab_test_index", true, `CREATE INDEX payments_amount ON Payments (Amount)`, "seed", "--reset", "--db", "URL"), unchanged: true},
		{name: "seed --reset: leaselab's schema plus a column", code: exitEnvError,
			msg:   "it holds a column payments.note, which leaselab does not create",
			setup: pgHostile("leaselab_test_column", true, `ALTER TABLE Payments ADD COLUMN Note text`, "seed", "--reset", "--db", "URL"), unchanged: true},
		{name: "seed --reset: leaselab's schema with a column's type changed", code: exitEnvError,
			msg:   "its column payments.amount is",
			setup: pgHostile("leaselab_test_coltype", true, `ALTER TABLE Payments ALTER COLUMN Amount TYPE numeric`, "seed", "--reset", "--db", "URL"), unchanged: true},
		{name: "worker: leaselab's schema plus a table of the user's", code: exitEnvError,
			msg:   "it holds a table audit, which leaselab does not create",
			setup: pgHostile("leaselab_test_wtable", true, `CREATE TABLE audit (Note text)`, "worker", "--name", "w1", "--db", "URL"), unchanged: true},
		{name: "seed: an empty schema with another program's comment", code: exitEnvError,
			msg:   `its comment "the billing team's" is another program's`,
			setup: pgHostile("leaselab_test_comment", false, `DO $$ BEGIN EXECUTE format('COMMENT ON SCHEMA %I IS %L', current_schema(), 'the billing team''s'); END $$`, "seed", "--db", "URL"), unchanged: true},
	})
}

// URL parameters reach the server as they were written, and a schema named twice is refused.
// Today options=-c%20… is re-encoded as -c+… (the server refuses "+statement_timeout"), and the
// first of two schema= parameters is silently taken.
func TestHostilePostgresURLParameters(t *testing.T) {
	t.Cleanup(func() {
		pgExec(t, "public", "DROP SCHEMA IF EXISTS leaselab_a CASCADE; DROP SCHEMA IF EXISTS leaselab_b CASCADE")
	})
	runHostile(t, "PostgreSQL --db", []hostileCase{
		{name: "options=-c%20statement_timeout%3D5000 in the URL", code: exitOK, msg: "seeded 2 payments",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"seed", "--messages", "2", "--db", pgSchemaURL(t, "leaselab_test_options") + "&options=-c%20statement_timeout%3D5000"}, ""
			}},
		{name: "schema= given twice", code: exitUsage, msg: "schema= given 2 times (leaselab_a, leaselab_b): give it once",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"seed", "--db", storetest.PostgresURL(t) + "&schema=leaselab_a&schema=leaselab_b"}, ""
			}},
	})
}

// A server that accepts the TCP connection and never answers: refused after the connect
// timeout (10 s), saying so. Today: "context deadline exceeded" after 60 s.
func TestHostilePostgresSilentServer(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the connect timeout")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	t.Cleanup(func() {
		ln.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case held <- c: // held open, never answered
			default:
				c.Close()
			}
		}
	}()
	start := time.Now()
	runHostile(t, "PostgreSQL --db", []hostileCase{
		{name: "a server that accepts TCP and never answers", code: exitEnvError, msg: "no answer from the server within 10s (connect_timeout)",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"run", "after", "--db", "postgres://u@" + ln.Addr().String() + "/db"}, ""
			}},
	})
	if took := time.Since(start); took > 25*time.Second {
		t.Errorf("refused after %s, want about 10 s", took)
	}
}
