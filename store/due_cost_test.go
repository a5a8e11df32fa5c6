package store

import (
	"context"
	"database/sql"
	"syscall"
	"testing"
	"time"

	"leaselab/engine"
)

// cpuTime is the CPU the process has used (SQLite runs in it: modernc.org/sqlite is Go).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A due claim's cost must not grow with the rows in backoff, whether they are due (a worker whose
// clock runs ahead sees every backoff over) or not (a claim that finds nothing reads why). The
// due read sorted every due row, and the read of why nothing was due sorted every unfinished row:
// the hostile run's file (messages: 100000, skew: B +1h, fail-rate: 0.3, backoff: on, …) did not
// finish in 590 s, and 1,000 → 4,000 messages cost 2.9 → 15.0 s of CPU. Here the CPU of a claim
// behind 500 and behind 20,000 rows in backoff is compared, measured side by side: with the old
// reads the ratio was 16 to 18, with these it is about 1 (the bound is 4, for a loaded machine).
func TestDueClaimsDoNotReadTheBacklog(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 20,000 rows")
	}
	ctx := context.Background()
	perClaim := func(t *testing.T, rows int, now time.Time, want engine.ClaimOutcome) time.Duration {
		db := benchDB(t, rows)
		if _, err := db.admin.ExecContext(ctx, `UPDATE OutboxMessages SET NextAttemptUtc = :next, Attempts = 1, LastError = 'timeout'`,
			sql.Named("next", FormatTime(benchT0.Add(time.Second)))); err != nil {
			t.Fatal(err)
		}
		c, err := db.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conn := c.(*Conn)
		const claims = 40
		req := engine.ClaimRequest{Worker: "Worker-B", Now: now, Until: now.Add(time.Hour)}
		if _, err := conn.ClaimDue(ctx, req); err != nil { // a first claim: the statements prepared, the pages read
			t.Fatal(err)
		}
		start := cpuTime()
		for i := 0; i < claims; i++ {
			res, err := conn.ClaimDue(ctx, req)
			if err != nil || res.Outcome != want {
				t.Fatalf("claim %d behind %d rows: %+v, %v; want %s", i, rows, res, err, want)
			}
		}
		return (cpuTime() - start) / claims
	}
	for _, c := range []struct {
		name string
		now  time.Time
		want engine.ClaimOutcome
	}{
		{"every backoff over (a clock an hour ahead)", benchT0.Add(time.Hour), engine.ClaimWon},
		{"no backoff over (the claim says which ends first)", benchT0, engine.ClaimBlocked},
	} {
		t.Run(c.name, func(t *testing.T) {
			small := perClaim(t, 500, c.now, c.want)
			large := perClaim(t, 20_000, c.now, c.want)
			ratio := float64(large) / float64(max(small, time.Microsecond))
			t.Logf("CPU per claim: %s behind 500 rows, %s behind 20,000 (×%.1f)", small, large, ratio)
			if ratio > 4 {
				t.Errorf("a due claim behind 20,000 rows costs %.1f× one behind 500 (%s, %s): it reads the backlog", ratio, large, small)
			}
		})
	}
}
