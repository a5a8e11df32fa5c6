package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5"
)

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
		conn, err := pgx.Connect(ctx, storetest.PostgresURL(t))
		if err != nil {
			t.Errorf("drop schema %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "SET lock_timeout = '20s'"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
			return
		}
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return u.String()
}

func TestHostilePostgres(t *testing.T) {
	runHostile(t, "PostgreSQL --db", []hostileCase{
		{name: "a schema name that would need quoting", code: exitUsage, msg: `schema "Bad-Name"`,
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"run", "after", "--db", "postgres://u@127.0.0.1/db?schema=Bad-Name"}, ""
			}},
		{name: "no server at the URL (with a password)", code: exitEnvError, msg: "127.0.0.1:1",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"run", "after", "--db", "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=2"}, ""
			}},
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
				if code, _, errOut := cli(t, "seed", "--db", u, "--messages", "3"); code != exitOK {
					t.Fatalf("first seed: exit %d: %s", code, errOut)
				}
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
