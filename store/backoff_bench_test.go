package store

import (
	"context"
	"database/sql"
	"testing"

	"leaselab/store/storetest"
)

// BenchmarkClaimDueBehindBackoff is the due claim behind rows in backoff, on SQLite
// (storetest.ClaimDueBehindBackoff).
func BenchmarkClaimDueBehindBackoff(b *testing.B) {
	storetest.ClaimDueBehindBackoff(b, func(b *testing.B, backoff, due int) storetest.DueConn {
		ctx := context.Background()
		db := benchDB(b, backoff+due)
		if _, err := db.admin.ExecContext(ctx, `UPDATE OutboxMessages SET NextAttemptUtc = :next, Attempts = 1, LastError = 'timeout'
 WHERE Id IN (SELECT Id FROM OutboxMessages ORDER BY CreatedAtUtc, Id LIMIT :n)`,
			sql.Named("next", FormatTime(storetest.BackoffUntil)), sql.Named("n", backoff)); err != nil {
			b.Fatal(err)
		}
		if _, err := db.admin.ExecContext(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Checkpoint(ctx); err != nil {
			b.Fatal(err)
		}
		c, err := db.Connect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		return c.(*Conn)
	})
}
