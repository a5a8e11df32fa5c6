package cli

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/engine/words"
	"leaselab/store/storetest"
)

// The skip-locked lesson on a real PostgreSQL server, both ways: with SKIP LOCKED Worker-B's
// claim takes PAY-002 at once; without it, the claim waits behind Worker-A's open transaction
// until lock_timeout, is counted as blocked with its wait, and the database names the holder.
func TestSkipLockedLesson(t *testing.T) {
	pg := storetest.PostgresURL(t)
	ctx := context.Background()
	data, src, _ := assets.Scenario("skip-locked")
	for _, on := range []bool{true, false} {
		t.Run(engine.OnOff(on), func(t *testing.T) {
			sc, err := scenario.Parse(src, data)
			if err != nil {
				t.Fatal(err)
			}
			if err := sc.Apply(engine.Overrides{Toggles: map[string]bool{engine.ToggleSkipLocked: on}}); err != nil {
				t.Fatal(err)
			}
			rep, err := runScenario(ctx, sc, &dbOpener{b: backends(), path: pg})
			if err != nil {
				t.Fatal(err)
			}
			sum := rep.Summary
			if !sum.ExpectationsMet {
				t.Fatalf("expectations not met: %+v", sum.Expectations)
			}
			var b strings.Builder
			if err := words.WriteText(&b, rep); err != nil {
				t.Fatal(err)
			}
			text := b.String()
			if on {
				if sum.LockWaits != 0 || !strings.Contains(text, "Worker-B claimed PAY-002") {
					t.Fatalf("with SKIP LOCKED Worker-B should take PAY-002 at once (%d waits):\n%s", sum.LockWaits, text)
				}
				return
			}
			if sum.LockWaits != 1 || sum.LockWaitedMS < 290 {
				t.Errorf("lock waits %d, %d ms; want 1 of about the 300 ms lock_timeout", sum.LockWaits, sum.LockWaitedMS)
			}
			containsAll(t, "the report", text,
				"Worker-A locked PAY-001 (BEGIN; SELECT … FOR UPDATE)",
				"for the row lock on PAY-001, held by Worker-A's open transaction",
				"Claims that waited for a row lock               1 (",
				"[FAIL] no claim waited for another's row lock: 1 claim waited")
		})
	}
}

// A lesson that needs PostgreSQL is refused on a SQLite file, before the file is made, and
// left out of the lab's tab order there.
func TestPostgresOnlyLessonOnSQLite(t *testing.T) {
	runHostile(t, "backend", []hostileCase{{
		name: "run skip-locked on a SQLite file",
		setup: func(t *testing.T, dir string) ([]string, string) {
			return []string{"run", "skip-locked", "--db", filepath.Join(dir, "x.db")}, filepath.Join(dir, "x.db")
		},
		unchanged: true, code: 2, msg: "scenario skip-locked needs PostgreSQL: it teaches row locks, and SQLite has none",
	}, {
		name: "run skip-locked with no --db (a temporary SQLite file)",
		setup: func(t *testing.T, dir string) ([]string, string) {
			return []string{"run", "skip-locked"}, ""
		},
		code: 2, msg: "pass --db postgres://",
	}})
	sqlite, pg := lessonsFor(backends(), ""), lessonsFor(backends(), "postgres://u@h/db")
	if strings.Contains(strings.Join(sqlite, " "), "skip-locked") || !slices.Equal(slices.DeleteFunc(slices.Clone(pg), func(n string) bool { return n == "skip-locked" }), sqlite) || len(pg) != len(sqlite)+1 {
		t.Fatalf("lessons on SQLite %v, on PostgreSQL %v", sqlite, pg)
	}
}

// Stress on PostgreSQL with skip-locked off: real goroutine workers queue behind each other's
// claim locks, and the table says how often and how long; with it on, no claim waits.
func TestStressCountsLockWaitsOnPostgres(t *testing.T) {
	pg := storetest.PostgresURL(t)
	code, out, stderr := cli(t, "stress", "--db", pg, "--workers", "4", "--messages", "200", "--skip-locked=false")
	if code != 0 || !strings.Contains(out, "skip-locked=off") || !strings.Contains(out, "claims waited for another transaction's row lock") {
		t.Fatalf("stress --skip-locked=false: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = cli(t, "stress", "--db", pg, "--workers", "4", "--messages", "200")
	if code != 0 || strings.Contains(out, "lock waits:") {
		t.Fatalf("stress with SKIP LOCKED: exit %d\n%s%s", code, out, stderr)
	}
}
