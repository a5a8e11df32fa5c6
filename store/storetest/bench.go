package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"leaselab/engine"
)

// DueConn is a connection with the due claim (retry backoff on): both backends' *Conn.
type DueConn interface {
	ClaimDue(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error)
	Finalize(ctx context.Context, req engine.FinalizeRequest) (engine.FinalizeResult, error)
}

// BackoffUntil is when the rows ClaimDueBehindBackoff puts in backoff may be claimed again: an
// hour after the suite's start of time, long after every claim of the benchmark.
var BackoffUntil = t0.Add(time.Hour)

// ClaimDueBehindBackoff is BenchmarkClaimDueBehindBackoff of both backends: for 0, 1,000 and
// 10,000 rows in backoff, setup makes a database of backoff+due Pending messages whose oldest
// backoff wait for BackoffUntil (ahead, in claim order, of the first row that is due) and
// returns one connection to it. One op is one ClaimDue at t0 (timed) and the finalize of its
// row (not timed). The due claim's cost must not grow with the rows in backoff
// (docs/benchmarks.md, "The due claim behind rows in backoff").
func ClaimDueBehindBackoff(b *testing.B, setup func(b *testing.B, backoff, due int) DueConn) {
	for _, backoff := range []int{0, 1_000, 10_000} {
		b.Run(fmt.Sprintf("backoff=%d", backoff), func(b *testing.B) {
			ctx := context.Background()
			c := setup(b, backoff, b.N+1)
			req := engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0.Add(time.Hour)}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := c.ClaimDue(ctx, req)
				b.StopTimer()
				if err != nil || res.Outcome != engine.ClaimWon {
					b.Fatalf("claim %d: %+v, %v", i, res, err)
				}
				if _, err := c.Finalize(ctx, engine.FinalizeRequest{Worker: req.Worker, Message: res.Message, Now: t0,
					PaymentStatus: engine.PaymentPaid, TransactionID: fmt.Sprintf("txn_%d", res.Message.ID),
					OwnershipCheck: true, Fencing: true}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
