package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store/postgres"
	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5"
)

// rawConn is a connection of the test's own in db's schema, outside leaselab.
func rawConn(t *testing.T, db *postgres.DB) *pgx.Conn {
	t.Helper()
	conn := storetest.PGConnect(t, db.SchemaName())
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// A row another transaction holds locked is passed over, not waited for: the claim takes the
// next one at once. Were it to wait, it would fail with ErrBusy after LockTimeout.
func TestSkipLockedNeverBlocks(t *testing.T) {
	db := seededDB(t, 2)
	ctx := context.Background()
	holder := rawConn(t, db)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM OutboxMessages WHERE IdempotencyKey = 'PAY-001' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	c, err := db.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Claim(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0.Add(time.Second)})
	if err != nil || res.Outcome != engine.ClaimWon || res.Message.IdempotencyKey != "PAY-002" {
		t.Fatalf("claim beside a locked PAY-001 = %+v, %v; want PAY-002 won at once", res, err)
	}
	// With both rows taken (one locked, one leased) the claim takes nothing, still without
	// waiting: PAY-001 is claimable but locked by another transaction, so it lost the race for
	// it (no lease held it back: never "blocked" by an empty owner).
	res, err = c.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: t0, Until: t0.Add(time.Second)})
	if err != nil || res.Outcome != engine.ClaimLost || res.Blocker != "PAY-001" {
		t.Fatalf("claim with PAY-001 locked and PAY-002 leased = %+v, %v; want a lost race for PAY-001", res, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if res, err := c.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: t0, Until: t0.Add(time.Second)}); err != nil || res.Message.IdempotencyKey != "PAY-001" {
		t.Fatalf("claim after the lock was released = %+v, %v; want PAY-001", res, err)
	}
}

// With a real backlog, just seeded, the claim's pick is an ordered scan of the partial
// index that stops at the first row it can lock: no sequential scan, no sort.
func TestClaimPlanUsesPartialIndex(t *testing.T) {
	db := newDB(t)
	ctx := context.Background()
	if err := db.SeedBulk(ctx, 5000, t0); err != nil {
		t.Fatal(err)
	}
	conn := rawConn(t, db) // no ANALYZE here: SeedBulk must leave statistics behind
	text := claimPlan(t, conn, postgres.ClaimSQL)
	if !strings.Contains(text, "Index Scan using outboxmessages_claimable on outboxmessages") ||
		strings.Contains(text, "Seq Scan") || strings.Contains(text, "Sort") || !strings.Contains(text, "LockRows") {
		t.Fatalf("claim plan:\n%s\nwant LockRows over an Index Scan using outboxmessages_claimable, no Seq Scan, no Sort", text)
	}
	// The due claim (package retry) picks from its own two indexes, the rows that never failed
	// in claim order and the range of those whose backoff is over (an index scan, or a bitmap of
	// it), just seeded and with 4,000
	// rows in backoff ahead of the rest: it never walks OutboxMessages_Claimable, where the rows
	// in backoff stand in the way. Its sorts are of the few rows each pick found.
	for _, backoff := range []bool{false, true} {
		if backoff {
			for _, q := range []string{`UPDATE OutboxMessages SET NextAttemptUtc = $1, Attempts = 1
 WHERE Id IN (SELECT Id FROM OutboxMessages ORDER BY CreatedAtUtc, Id LIMIT 4000)`, `VACUUM ANALYZE OutboxMessages`} {
				args := []any{t0.Add(time.Hour)}
				if strings.HasPrefix(q, "VACUUM") {
					args = nil
				}
				if _, err := conn.Exec(ctx, q, args...); err != nil {
					t.Fatal(err)
				}
			}
		}
		// pgx prepares its statements, and PostgreSQL may then plan them once for any argument
		// (a generic plan): that plan too (it once walked OutboxMessages_Claimable, every row).
		for _, generic := range []bool{false, true} {
			text := claimPlan(t, conn, postgres.ClaimDueSQL)
			if generic {
				text = genericPlan(t, conn, postgres.ClaimDueSQL)
			}
			for _, want := range []string{"LockRows", "Index Scan using outboxmessages_fresh on outboxmessages",
				"outboxmessages_backoff", "Index Cond: (nextattemptutc <= "} {
				if !strings.Contains(text, want) || strings.Contains(text, "Seq Scan") || strings.Contains(text, "outboxmessages_claimable") {
					t.Fatalf("due claim plan (rows in backoff: %v, generic: %v):\n%s\nwant %q, no Seq Scan, no outboxmessages_claimable", backoff, generic, text, want)
				}
			}
		}
	}
}

// genericPlan is the generic plan of claim, prepared, for the claim's arguments.
func genericPlan(t *testing.T, conn *pgx.Conn, claim string) string {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{"SET plan_cache_mode = force_generic_plan",
		"PREPARE due_claim (timestamptz, text, timestamptz) AS " + claim} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	defer conn.Exec(ctx, "RESET plan_cache_mode")
	defer conn.Exec(ctx, "DEALLOCATE due_claim")
	rows, err := conn.Query(ctx, fmt.Sprintf("EXPLAIN (COSTS OFF) EXECUTE due_claim ('%s', 'Worker-A', '%s')",
		t0.Format(time.RFC3339Nano), t0.Add(time.Second).Format(time.RFC3339Nano)))
	if err != nil {
		t.Fatal(err)
	}
	return planText(t, rows)
}

// claimPlan is the plan of claim, with the claim's arguments.
func claimPlan(t *testing.T, conn *pgx.Conn, claim string) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), "EXPLAIN (COSTS OFF) "+claim, t0, "Worker-A", t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return planText(t, rows)
}
