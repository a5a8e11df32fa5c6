package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/store/storetest"
)

// comparable is what must be the same on every backend: the summary (ledgers, checks,
// expectations, verdict) without the database's name, every event, every row as it ended, each
// worker's ledger and each attempt.
//
// A scenario with a concurrent phase runs its workers free on goroutines, and which worker does
// what differs from run to run on either backend: for it only what the schedule cannot change is
// compared, the verdict, the checks, the expectations and the totals of the work.
func comparable(t *testing.T, sc *engine.Scenario, rep *engine.Report) string {
	t.Helper()
	sum := *rep.Summary
	sum.Database, sum.ReportFile = "", ""
	if free(sc) {
		b, err := json.MarshalIndent(struct {
			Verdict                                                string
			Passed, ExpectationsMet                                bool
			Checks                                                 []engine.Check
			Expectations                                           []engine.ExpectResult
			Messages, Attempts, Unique, Twice, Checked, Violations int
			Payments                                               engine.PaymentCounts
			Outbox                                                 engine.OutboxCounts
			DuplicateRows, Lost                                    int
		}{sum.Verdict, sum.Passed, sum.ExpectationsMet, sum.Checks, sum.Expectations, sum.Messages,
			sum.ProcessingAttempts, sum.UniqueProcessed, sum.ProcessedMoreThanOnce, sum.StatusChecks,
			sum.OwnershipViolations, sum.Payments, sum.Outbox, sum.DuplicateRows, sum.Lost}, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	events := make([]string, len(rep.Events))
	for i, e := range rep.Events {
		events[i] = e.String()
	}
	b, err := json.MarshalIndent(struct {
		Summary  engine.Summary
		Events   []string
		Rows     []engine.Row
		Ledgers  map[string]engine.WorkerLedger
		Attempts map[string][]engine.Attempt
	}{sum, events, rep.Rows, rep.Ledgers, rep.Attempts}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// free reports whether sc has a concurrent phase.
func free(sc *engine.Scenario) bool {
	for _, st := range sc.Steps {
		if st.Kind == engine.StepConcurrent {
			return true
		}
	}
	return false
}

// Every built-in scenario gives the same verdict, the same ledgers, the same events and the same
// rows on PostgreSQL as on SQLite.
func TestScenariosSameOnPostgres(t *testing.T) {
	pg := storetest.PostgresURL(t)
	ctx := context.Background()
	for _, name := range assets.Names() {
		t.Run(name, func(t *testing.T) {
			data, src, _ := assets.Scenario(name)
			if sc, err := scenario.Parse(src, data); err == nil && sc.Backend == engine.BackendPostgres {
				// SQLite cannot run it (TestPostgresOnlyLessonOnSQLite); on PostgreSQL its own
				// expectations are the measure (TestSkipLockedLesson).
				t.Skip("PostgreSQL only")
			}
			var got [2]string
			for i, where := range []string{"", pg} {
				sc, err := scenario.Parse(src, data)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := runScenario(ctx, sc, &dbOpener{b: backends(), path: where})
				if err != nil {
					t.Fatalf("%s on %q: %v", name, where, err)
				}
				if i == 1 && !strings.HasPrefix(rep.Summary.Database, "postgres://") {
					t.Fatalf("the PostgreSQL run's database is %q", rep.Summary.Database)
				}
				got[i] = comparable(t, sc, rep)
			}
			if got[0] != got[1] {
				t.Fatalf("%s differs between SQLite and PostgreSQL:\n%s", name, firstDiff(got[0], got[1]))
			}
		})
	}
}

// firstDiff shows the first line where a and b differ, with a little context.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			lo := max(0, i-3)
			return fmt.Sprintf("line %d\nsqlite:   %s\npostgres: %s\ncontext:\n%s", i+1, al[i], bl[i], strings.Join(al[lo:i], "\n"))
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(al), len(bl))
}
