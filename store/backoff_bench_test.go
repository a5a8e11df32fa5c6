package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"leaselab/engine"
)

// BenchmarkClaimDueBehindBackoff is the due claim (ClaimDue, retry backoff on) and the finalize
// of what it took, when the oldest Pending rows all wait in their backoff: `backoff` rows whose
// NextAttemptUtc is an hour away, ahead, in claim order, of the first row that is due. One op is
// one claim (timed) and the finalize of its row (not timed), on one connection. The claim's cost must not grow with the rows in
// backoff (docs/benchmarks.md, "The due claim behind rows in backoff").
func BenchmarkClaimDueBehindBackoff(b *testing.B) {
	for _, backoff := range []int{0, 1_000, 10_000} {
		b.Run(fmt.Sprintf("backoff=%d", backoff), func(b *testing.B) {
			ctx := context.Background()
			db := backoffDB(b, backoff, b.N+1)
			ec, err := db.Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer ec.Close()
			c := ec.(*Conn)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := c.ClaimDue(ctx, claimReq(0))
				b.StopTimer()
				if err != nil || res.Outcome != engine.ClaimWon {
					b.Fatalf("claim %d: %+v, %v", i, res, err)
				}
				if _, err := c.Finalize(ctx, finReq(0, res.Message)); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// backoffDB is a database of backoff+due Pending messages, the oldest backoff of them waiting
// for a next attempt an hour after benchT0 (as after a failed attempt), analysed and
// checkpointed.
func backoffDB(tb testing.TB, backoff, due int) *DB {
	tb.Helper()
	ctx := context.Background()
	db := benchDB(tb, backoff+due)
	if _, err := db.admin.ExecContext(ctx, `UPDATE OutboxMessages SET NextAttemptUtc = :next, Attempts = 1, LastError = 'timeout'
 WHERE Id IN (SELECT Id FROM OutboxMessages ORDER BY CreatedAtUtc, Id LIMIT :n)`,
		sql.Named("next", FormatTime(benchT0.Add(time.Hour))), sql.Named("n", backoff)); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.admin.ExecContext(ctx, `ANALYZE`); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.Checkpoint(ctx); err != nil {
		tb.Fatal(err)
	}
	return db
}
