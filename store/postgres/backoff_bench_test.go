package postgres_test

import (
	"context"
	"testing"

	"leaselab/store/postgres"
	"leaselab/store/storetest"
)

// BenchmarkClaimDueBehindBackoff is storetest.ClaimDueBehindBackoff on PostgreSQL.
func BenchmarkClaimDueBehindBackoff(b *testing.B) { storetest.ClaimDueBehindBackoff(b, backoffConn) }

// backoffConn is a fresh schema of backoff+due Pending messages, the oldest backoff of them in
// their backoff until storetest.BackoffUntil, analysed, and a worker connection to it.
func backoffConn(b *testing.B, backoff, due int) storetest.DueConn {
	ctx := context.Background()
	db := newDB(b)
	if err := db.SeedBulk(ctx, backoff+due, t0); err != nil {
		b.Fatal(err)
	}
	raw := storetest.PGConnect(b, db.SchemaName())
	defer raw.Close(ctx)
	if _, err := raw.Exec(ctx, `UPDATE OutboxMessages SET NextAttemptUtc = $1, Attempts = 1, LastError = 'timeout'
 WHERE Id IN (SELECT Id FROM OutboxMessages ORDER BY CreatedAtUtc, Id LIMIT $2)`, storetest.BackoffUntil, backoff); err != nil {
		b.Fatal(err)
	}
	// VACUUM as autovacuum would after so many updates: the rows that went into backoff leave
	// dead entries in OutboxMessages_Fresh, which a due claim steps over until then (docs/benchmarks.md).
	if _, err := raw.Exec(ctx, `VACUUM ANALYZE OutboxMessages`); err != nil {
		b.Fatal(err)
	}
	c, err := db.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c.(*postgres.Conn)
}
