package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/store"
)

// retryRun runs sc to its end on a fresh SQLite file and returns the summary and the database.
func retryRun(t *testing.T, sc *engine.Scenario) (*engine.Summary, *store.DB, error) {
	t.Helper()
	ctx := context.Background()
	db := freshDB(t, "leaselab.db")
	s, err := engine.NewSession(ctx, sc, db)
	if err != nil {
		t.Fatal(err)
	}
	runErr := s.Script().RunToEnd(ctx)
	if runErr != nil && !errors.Is(runErr, engine.ErrNoProgress) {
		t.Fatal(runErr)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sum, db, runErr
}

// With max-attempts 3, PAY-004 (always failing) is dead-lettered after its third attempt, with
// its error and attempt count: never claimed again, counted apart, not lost. A redrive is
// guarded: refused for a message that is not dead-lettered.
func TestDeadLetterAfterMaxAttemptsAndRedrive(t *testing.T) {
	sum, db, err := retryRun(t, loadScenario(t, "dead-letter", ""))
	if err != nil {
		t.Fatal(err)
	}
	if sum.DeadLettered != 1 || sum.Outbox.Processed != 5 || sum.Lost != 0 || sum.StatusChecksByKey["PAY-004"] != 3 ||
		sum.ProviderFailures != 3 || sum.Retries != 2 || !sum.Passed || !sum.ExpectationsMet {
		t.Fatalf("summary: %+v", sum)
	}
	ctx := context.Background()
	st, err := db.RetryState(ctx, "PAY-004")
	if err != nil || st.Status != engine.StatusDeadLettered || st.Attempts != 3 || !strings.Contains(st.LastError, "timeout") {
		t.Fatalf("PAY-004: %+v, %v", st, err)
	}
	if err := db.Redrive(ctx, "PAY-001"); !errors.Is(err, engine.ErrNotDeadLettered) {
		t.Fatalf("redrive of a processed message: %v, want ErrNotDeadLettered", err)
	}
	if err := db.Redrive(ctx, "PAY-404"); !errors.Is(err, engine.ErrNoSuchMessage) {
		t.Fatalf("redrive of no message: %v, want ErrNoSuchMessage", err)
	}
	if err := db.Redrive(ctx, "PAY-004"); err != nil {
		t.Fatal(err)
	}
	if st, _ := db.RetryState(ctx, "PAY-004"); st.Status != engine.StatusPending || st.Attempts != 0 {
		t.Fatalf("after the redrive: %+v", st)
	}
	if err := db.Redrive(ctx, "PAY-004"); !errors.Is(err, engine.ErrNotDeadLettered) {
		t.Fatalf("second redrive: %v, want ErrNotDeadLettered", err)
	}
}

// Without a limit the poison message is retried until the watchdog ends the run; the other
// five finish, and nothing is dead-lettered.
func TestNoAttemptLimitEndsByTheWatchdog(t *testing.T) {
	sc := loadScenario(t, "dead-letter", "")
	sc.Settings.DeadLetter = false
	sum, _, err := retryRun(t, sc)
	if !errors.Is(err, engine.ErrNoProgress) || sum.Outbox.Processed != 5 || sum.DeadLettered != 0 || sum.ProviderFailures < 100 {
		t.Fatalf("err %v, summary %+v", err, sum)
	}
}

// A transient failure succeeds on a later attempt; a permanent one is parked at once.
func TestTransientAndPermanentFailures(t *testing.T) {
	sc := loadScenario(t, "", `name: t
messages: 6
workers: A B
provider-latency: 10ms
provider-error: PAY-002 times-out 2
provider-error: PAY-005 permanent
dead-letter: on
max-attempts: 5
backoff: on
steps:
  run until-done
`)
	sum, db, err := retryRun(t, sc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	two, _ := db.RetryState(ctx, "PAY-002")
	five, _ := db.RetryState(ctx, "PAY-005")
	if two.Status != engine.StatusProcessed || two.Attempts != 3 || five.Status != engine.StatusDeadLettered || five.Attempts != 1 ||
		sum.DeadLettered != 1 || sum.Outbox.Processed != 5 || sum.ProviderFailures != 3 {
		t.Fatalf("PAY-002 %+v, PAY-005 %+v, summary %+v", two, five, sum)
	}
}

// The outage lesson both ways: every message finishes; with backoff fewer calls fail, and the
// chart counts every provider call.
func TestRetryBackoffLesson(t *testing.T) {
	fails := map[bool]int{}
	for _, on := range []bool{false, true} {
		sc := loadScenario(t, "retry-backoff", "")
		sc.Settings.Backoff = on
		sum, _, err := retryRun(t, sc)
		if err != nil || sum.Outbox.Processed != 24 || sum.Lost != 0 || !sum.ExpectationsMet {
			t.Fatalf("backoff %v: %v, %+v", on, err, sum)
		}
		calls := 0
		for _, b := range sum.ProviderCalls {
			calls += b.Calls
		}
		if calls != sum.StatusChecks {
			t.Fatalf("backoff %v: the chart counts %d calls, the provider %d", on, calls, sum.StatusChecks)
		}
		fails[on] = sum.ProviderFailures
	}
	if fails[true] >= fails[false] {
		t.Fatalf("failed calls with backoff %d, without %d", fails[true], fails[false])
	}
}
