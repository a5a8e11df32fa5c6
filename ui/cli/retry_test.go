package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
)

// retryWhere is where the retry lessons run: a SQLite file, and PostgreSQL when the tests have
// a server.
func retryWhere(t *testing.T, name string) map[string]func() string {
	where := map[string]func() string{"sqlite": func() string { return filepath.Join(t.TempDir(), "x.db") }}
	if os.Getenv("LEASELAB_PG") != "" || os.Getenv("CI") != "" { // storetest.PostgresURL fails in CI without one
		where["postgres"] = func() string { return pgSchemaURL(t, name) }
	}
	return where
}

// Both retry lessons, each way, headless: exit 0, their expectations met, and the three ends
// of a message counted apart.
func TestRetryLessonsHeadless(t *testing.T) {
	for backend, db := range retryWhere(t, "leaselab_test_retry_lessons") {
		for _, c := range []struct {
			lesson, flag            string
			processed, parked, lost int
			watchdog                bool
		}{
			{"retry-backoff", "--backoff=true", 24, 0, 0, false},
			{"retry-backoff", "--backoff=false", 24, 0, 0, false},
			{"dead-letter", "--dead-letter=true", 5, 1, 0, false},
			{"dead-letter", "--dead-letter=false", 5, 0, 1, true},
		} {
			t.Run(backend+"/"+c.lesson+c.flag, func(t *testing.T) {
				code, out, errs := cli(t, "run", c.lesson, c.flag, "--json", "--report-dir", "", "--reset", "--db", db())
				if code != exitOK {
					t.Fatalf("exit %d: %s\n%s", code, errs, out)
				}
				var sum engine.Summary
				if err := json.Unmarshal([]byte(out), &sum); err != nil {
					t.Fatal(err)
				}
				if sum.Outbox.Processed != c.processed || sum.DeadLettered != c.parked || sum.Lost != c.lost ||
					sum.WatchdogEnded != c.watchdog || !sum.ExpectationsMet || sum.ProviderFailures == 0 || len(sum.ProviderCalls) == 0 {
					t.Fatalf("summary: %+v", sum)
				}
				if !strings.Contains(out, `"dead_lettered"`) && c.parked > 0 {
					t.Fatalf("the JSON does not count dead_lettered: %s", out)
				}
			})
		}
	}
}

// leaselab redrive moves a dead letter back to Pending, and refuses (exit 1, nothing changed)
// a message that is not dead-lettered, or that does not exist.
func TestRedriveCommand(t *testing.T) {
	for backend, where := range retryWhere(t, "leaselab_test_redrive") {
		t.Run(backend, func(t *testing.T) {
			db := where()
			if code, _, errs := cli(t, "run", "dead-letter", "--report-dir", "", "--db", db); code != exitOK {
				t.Fatalf("run: exit %d: %s", code, errs)
			}
			code, out, errs := cli(t, "redrive", "--db", db, "--key", "PAY-004")
			if code != exitOK || !strings.Contains(out, "redriven PAY-004") {
				t.Fatalf("redrive: exit %d: %s%s", code, out, errs)
			}
			for key, msg := range map[string]string{"PAY-004": "it is Pending, not dead-lettered", "PAY-001": "it is Processed, not dead-lettered", "PAY-404": "no such message"} {
				code, out, errs := cli(t, "redrive", "--db", db, "--key", key)
				if code != exitExpect || out != "" || !strings.Contains(errs, "refused: redrive "+key+": "+msg) {
					t.Errorf("redrive %s: exit %d, %q, %q; want 1 and %q", key, code, out, errs, msg)
				}
			}
			if code, _, errs := cli(t, "redrive", "--db", db); code != exitUsage || !strings.Contains(errs, "--key KEY is required") {
				t.Errorf("redrive without --key: exit %d, %q", code, errs)
			}
		})
	}
}

// stress with failures, backoff and dead letters finishes promptly: when every message left
// waits in its backoff, the clock driver moves the scenario clock to the earliest next attempt
// (it used to jump past leases only, and such a run waited for its --timeout). Every message is
// finished or dead-lettered, none lost, none written twice. 400 messages take about 2 s (30 s
// under -race); before, the run stopped at its first backoff and waited for the timeout.
func TestStressWithBackoffFinishes(t *testing.T) {
	for backend, db := range retryWhere(t, "leaselab_test_stress_backoff") {
		t.Run(backend, func(t *testing.T) {
			start := time.Now()
			code, out, errs := cli(t, "stress", "--messages", "400", "--fail-rate", "0.3", "--backoff", "--max-attempts", "3",
				"--crash-rate", "0", "--timeout", "60s", "--reset", "--db", db())
			if code != exitOK {
				t.Fatalf("exit %d after %s: %s\n%s", code, time.Since(start).Round(time.Millisecond), errs, out)
			}
			if !strings.Contains(out, "messages dead-lettered") || !strings.Contains(out, "provider calls failed") {
				t.Fatalf("no failures or dead letters counted:\n%s", out)
			}
		})
	}
}

// stress --skew gives each worker its clock offset: a worker 400 ms fast takes over live
// leases, and the checks catch two owners (exit 1); with the database's clock they hold.
// --fair-lock makes the workers take turns for SQLite's write lock: without it a loaded
// machine (CI) once ran it with a least share of 0.0 %, Worker-B starved of the lock, so
// its fast clock met no live lease and the run found no second owner. Two runs give the race two seeds.
func TestStressSkew(t *testing.T) {
	for _, c := range []struct {
		clock string
		code  int
	}{{"--db-clock=false", exitExpect}, {"--db-clock=true", exitOK}} {
		t.Run(c.clock, func(t *testing.T) {
			code, out, errs := cli(t, "stress", "--messages", "300", "--skew", "B=+400ms", c.clock, "--fair-lock", "--runs", "2", "--timeout", "20s")
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s\n%s", code, c.code, errs, out)
			}
			if c.code == exitExpect && !strings.Contains(out, "processed by two owners at once") {
				t.Fatalf("no two owners found:\n%s", out)
			}
		})
	}
}
