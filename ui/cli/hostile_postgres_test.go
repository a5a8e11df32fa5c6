package cli

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"leaselab/store/storetest"
)

func TestHostilePostgres(t *testing.T) {
	runHostile(t, "PostgreSQL --db", []hostileCase{
		{name: "a schema name that would need quoting", code: exitUsage, msg: `schema "Bad-Name"`,
			setup: args("run", "after", "--db", "postgres://u@127.0.0.1/db?schema=Bad-Name")},
		{name: "no server at the URL (with a password)", code: exitEnvError, msg: "127.0.0.1:1",
			setup: args("run", "after", "--db", "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=2")},
		{name: "--fair-lock on PostgreSQL", code: exitUsage, msg: "--fair-lock",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"stress", "--fair-lock", "--db", storetest.PostgresURL(t)}, ""
			}},
		{name: "worker on a schema nobody seeded", code: exitEnvError, msg: "leaselab seed",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"worker", "--name", "w1", "--db", pgSchemaURL(t, "leaselab_test_unseeded")}, ""
			}},
		{name: "seed a schema that holds rows, without --reset", code: exitEnvError, msg: "--reset",
			setup: func(t *testing.T, dir string) ([]string, string) {
				u := pgSchemaURL(t, "leaselab_test_reseed")
				seedDB(t, u, 3)
				return []string{"seed", "--db", u, "--messages", "3"}, ""
			}},
	})
}

// No password reaches the output, whatever fails.
func TestPostgresPasswordNeverPrinted(t *testing.T) {
	code, out, errOut := cli(t, "run", "after", "--db", "postgres://alice:s3cret@127.0.0.1:1/db?connect_timeout=2")
	if code != exitEnvError || strings.Contains(out+errOut, "s3cret") {
		t.Fatalf("exit %d, output %q: want 3 and no password", code, out+errOut)
	}
	pg := storetest.PostgresURL(t)
	u, _ := url.Parse(pg)
	if _, has := u.User.Password(); !has {
		u.User = url.UserPassword(u.User.Username(), "not-needed-by-trust")
	}
	code, out, errOut = cli(t, "run", "before", "--db", u.String())
	if code != exitOK || strings.Contains(out+errOut, "not-needed-by-trust") || !strings.Contains(out, "postgres://") {
		t.Fatalf("exit %d, stderr %s; the report must name the server without the password:\n%.600s", code, errOut, out)
	}
}

// seed, then two worker processes' worth of work on one shared schema: everything processed
// once, shown by the counts the workers print.
func TestSeedAndWorkersOnPostgres(t *testing.T) {
	u := pgSchemaURL(t, "leaselab_test_workers")
	if code, out, errOut := cli(t, "seed", "--db", u, "--messages", "8"); code != exitOK || !strings.Contains(out, "seeded 8") || strings.Contains(out, "password") {
		t.Fatalf("seed: exit %d: %s%s", code, out, errOut)
	}
	total := 0
	for _, w := range []string{"w1", "w2"} {
		code, out, errOut := cli(t, "worker", "--db", u, "--name", w, "--lease", "2s")
		if code != exitOK {
			t.Fatalf("worker %s: exit %d: %s", w, code, errOut)
		}
		var won, re, blocked, processed, finalized int
		last := out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]
		if _, err := fmt.Sscanf(last[strings.Index(last, "done:"):], "done: %d claims won (%d reclaims), %d blocked, %d processed, %d finalized",
			&won, &re, &blocked, &processed, &finalized); err != nil {
			t.Fatalf("worker %s's last line %q: %v", w, last, err)
		}
		total += finalized
	}
	if total != 8 {
		t.Fatalf("the workers finalized %d messages, want 8", total)
	}
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
			seedDB(t, u, 3)
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
