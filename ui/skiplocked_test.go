package ui

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/store/postgres"
	"leaselab/store/storetest"
)

// pgOpener is opener on a PostgreSQL server: each scenario in a schema of its own.
func pgOpener(tb testing.TB) func(ctx context.Context, name string) (*engine.Session, error) {
	tb.Helper()
	url := storetest.PostgresURL(tb)
	n := 0
	return openerOn(tb, engine.Overrides{}, func(ctx context.Context) (engine.DB, func() error, error) {
		n++
		db, err := postgres.CreateTemp(ctx, url, time.Now(), fmt.Sprintf("ui%d_%d", os.Getpid(), n))
		if err != nil {
			return nil, nil, err
		}
		return db, db.Close, nil
	})
}

// The skip-locked lesson in the lab on PostgreSQL: the toggle is shown with its key, the lock
// step leaves Worker-A in an open transaction the rows do not show, and with skip-locked off
// Worker-B's claim waits for that lock and is counted as blocked with its wait.
func TestSkipLockedInTheLab(t *testing.T) {
	l := newLabOn(t, "skip-locked", 120, 40, Config{Scenarios: assets.Names(), Open: pgOpener(t)})
	l.must("◆skip-locked on (u)", "◆ this lesson")
	l.press("u")
	l.must("skip-locked off (u)")
	stepUntil(l, "locked PAY-001, tx open")
	if r := l.row("PAY-001"); !strings.Contains(r, "Pending") || !strings.Contains(r, "row lock: A") {
		t.Fatalf("the locked row should read Pending, with Worker-A's row lock from the server: %q", r)
	}
	stepUntil(l, "held by Worker-A's open transaction")
	l.must("WAITED")
	l.press("v") // the SQL as the server ran it: the NOWAIT that met the lock, then the wait
	l.must("FOR UPDATE NOWAIT", "SQLSTATE 55P03")
	l.press("v")
	if got := l.m.frame.Total.LockWaits; got != 1 {
		t.Fatalf("lock waits %d, want 1\n%s", got, l.view())
	}
	for !l.m.frame.Done {
		stepAnswering(l, true)
	}
	if sum := l.m.frame.Summary; sum.Passed || sum.LockWaits != 1 || !sum.ExpectationsMet {
		t.Fatalf("verdict pass=%v waits=%d expectations met=%v", sum.Passed, sum.LockWaits, sum.ExpectationsMet)
	}
}

// On SQLite the key is off and says why.
func TestSkipLockedKeyOnSQLite(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.mustNot("skip-locked")
	l.press("u")
	if !strings.Contains(l.m.status.Text, "skip-locked is PostgreSQL's") {
		t.Fatalf("u on SQLite: status %q", l.m.status.Text)
	}
}

// stepUntil steps (answering questions right) until the screen shows want, at most 10 times.
func stepUntil(l *lab, want string) {
	l.tb.Helper()
	for i := 0; i < 10 && !strings.Contains(l.view(), want); i++ {
		stepAnswering(l, true)
	}
	l.must(want)
}

// The lessons only PostgreSQL runs fit the screen too, with skip-locked on and off (the
// SQLite lessons: TestEveryLessonFitsTheScreen).
func TestPostgresLessonsFitTheScreen(t *testing.T) {
	for _, name := range assets.Names() {
		if slices.Contains(sqliteLessons(), name) {
			continue
		}
		for _, size := range [][2]int{{80, 24}, {120, 40}, {110, 30}} {
			for _, press := range []string{"", "u"} {
				t.Run(fmt.Sprintf("%s/%dx%d/%q", name, size[0], size[1], press), func(t *testing.T) {
					l := newLabOn(t, name, size[0], size[1], Config{Scenarios: assets.Names(), Open: pgOpener(t)})
					if press != "" {
						l.press(press)
					}
					screenFits(t, l, "the start")
					for i := 1; i <= 100 && !l.m.frame.Done; i++ {
						stepOrAnswer(l)
						screenFits(t, l, fmt.Sprintf("step %d", i))
					}
					if !l.m.frame.Done {
						t.Fatal("not done after 100 steps")
					}
				})
			}
		}
	}
}

// Step back works through the lock step and the measured wait: the rebuilt database has the
// rows of the earlier step (the wait's milliseconds are measured anew, not compared).
func TestSkipLockedStepBack(t *testing.T) {
	l := newLabOn(t, "skip-locked", 120, 40, Config{Scenarios: assets.Names(), Open: pgOpener(t)})
	l.press("u")
	stepUntil(l, "held by Worker-A's open transaction")
	stepAnswering(l, true)
	stepAnswering(l, true)
	l.press("b")
	if strings.Contains(l.m.status.Text, "could not") || strings.Contains(l.m.status.Text, "differ") {
		t.Fatalf("back: %s", l.m.status.Text)
	}
	l.press("b")
	l.press("b")
	t.Log(l.m.status.Text)
	for i := 0; i < 100 && !l.m.frame.Done; i++ {
		stepAnswering(l, true)
	}
	if sum := l.m.frame.Summary; !l.m.frame.Done || sum.LockWaits != 1 || !sum.ExpectationsMet {
		t.Fatalf("after going back and on: done=%v waits=%d met=%v\n%s", l.m.frame.Done, sum.LockWaits, sum.ExpectationsMet, l.view())
	}
}
