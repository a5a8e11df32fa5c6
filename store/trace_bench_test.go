package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"
)

// BenchmarkClaimFinalizeTrace is one worker's claim + finalize with the SQL trace off (the
// default, what every other benchmark runs) and on (the lab, run --sql, --transcript).
func BenchmarkClaimFinalizeTrace(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("trace=%v", on), func(b *testing.B) {
			ctx := context.Background()
			db, err := store.Create(ctx, filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if err := engine.Seed(ctx, engine.NewGateway(db), b.N, t0); err != nil {
				b.Fatal(err)
			}
			c, err := db.Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			tc := c.(engine.Tracer)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if on {
					tc.SetTrace(&engine.Trace{})
				}
				res, err := c.Claim(ctx, engine.ClaimRequest{Worker: "W", Now: t0, Until: t0.Add(time.Minute)})
				if err != nil || res.Outcome != engine.ClaimWon {
					b.Fatal(res, err)
				}
				if on {
					tc.SetTrace(&engine.Trace{})
				}
				if _, err := c.Finalize(ctx, engine.FinalizeRequest{Worker: "W", Message: res.Message, Now: t0,
					PaymentStatus: engine.PaymentPaid, TransactionID: "t", OwnershipCheck: true}); err != nil {
					b.Fatal(err)
				}
				tc.SetTrace(nil)
			}
		})
	}
}
