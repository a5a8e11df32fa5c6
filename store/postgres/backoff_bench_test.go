package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store/storetest"
)

// BenchmarkClaimDueBehindBackoff is the due claim (ClaimDue, retry backoff on) when the oldest
// Pending rows all wait in their backoff: `backoff` rows whose NextAttemptUtc is an hour away,
// ahead, in claim order, of the first row that is due. One op is one claim (timed) and the
// finalize of its row (not timed), on one connection; the store's SQLite benchmark of the same
// name is its twin (docs/benchmarks.md, "The due claim behind rows in backoff").
func BenchmarkClaimDueBehindBackoff(b *testing.B) {
	for _, backoff := range []int{0, 1_000, 10_000} {
		b.Run(fmt.Sprintf("backoff=%d", backoff), func(b *testing.B) {
			ctx := context.Background()
			db := newDB(b)
			if err := db.SeedBulk(ctx, backoff+b.N+1, t0); err != nil {
				b.Fatal(err)
			}
			raw := storetest.PGConnect(b, db.SchemaName())
			defer raw.Close(ctx)
			if _, err := raw.Exec(ctx, `UPDATE OutboxMessages SET NextAttemptUtc = $1, Attempts = 1, LastError = 'timeout'
 WHERE Id IN (SELECT Id FROM OutboxMessages ORDER BY CreatedAtUtc, Id LIMIT $2)`, t0.Add(time.Hour), backoff); err != nil {
				b.Fatal(err)
			}
			if _, err := raw.Exec(ctx, `ANALYZE OutboxMessages`); err != nil {
				b.Fatal(err)
			}
			c, err := db.Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			req := engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0.Add(time.Hour)}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := c.(interface {
					ClaimDue(context.Context, engine.ClaimRequest) (engine.ClaimResult, error)
				}).ClaimDue(ctx, req)
				b.StopTimer()
				if err != nil || res.Outcome != engine.ClaimWon {
					b.Fatalf("claim %d: %+v, %v", i, res, err)
				}
				if _, err := c.Finalize(ctx, engine.FinalizeRequest{Worker: "Worker-A", Message: res.Message, Now: t0,
					PaymentStatus: engine.PaymentPaid, TransactionID: "txn", OwnershipCheck: true, Fencing: true}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
