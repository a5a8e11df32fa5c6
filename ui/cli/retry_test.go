package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
