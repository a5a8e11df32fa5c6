package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"leaselab/store/storetest"
)

// lessonClaimSQL is the claim's read as the lesson writes it: one SELECT with the OR. The claim's
// two index reads (candidates) must give exactly its rows, in its order.
const lessonClaimSQL = `SELECT Id FROM OutboxMessages
 WHERE ProcessedAtUtc IS NULL AND (Status = 'Pending' OR (Status = 'Processing' AND LockedUntilUtc < :now))
 ORDER BY CreatedAtUtc, Id
 LIMIT :k`

// On random outboxes (Pending, live and ended leases at a few instants, Processed rows; ties on
// CreatedAtUtc), candidates returns for every k what the lesson's SELECT returns, row for row.
func TestClaimReadIsTheLessonsSelect(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 16))
	for trial := range 60 {
		n := 1 + rng.IntN(40)
		db := benchDB(t, n)
		c := benchConns(t, db, 1, waitSQLite)[0]
		instants := 1 + rng.IntN(4)
		for id := 1; id <= n; id++ {
			switch r := rng.IntN(10); {
			case r < 3: // stays Pending
			case r < 8: // a lease, ended or live, at one of a few instants
				until := FormatTime(benchT0.Add(time.Duration(rng.IntN(instants*2)) * 100 * time.Millisecond))
				mustExec(t, c, `UPDATE OutboxMessages SET Status = 'Processing', LockedBy = 'W', LockedUntilUtc = ? WHERE Id = ?`, until, id)
			default:
				mustExec(t, c, `UPDATE OutboxMessages SET Status = 'Processed', ProcessedAtUtc = ? WHERE Id = ?`, FormatTime(benchT0), id)
			}
			if rng.IntN(4) == 0 { // ties on CreatedAtUtc
				mustExec(t, c, `UPDATE OutboxMessages SET CreatedAtUtc = ? WHERE Id = ?`, FormatTime(benchT0), id)
			}
		}
		now := FormatTime(benchT0.Add(time.Duration(rng.IntN(instants*2+1))*100*time.Millisecond + 50*time.Millisecond))
		for _, k := range []int{1, 2, 5, n + 1} {
			want := lessonIDs(t, c, now, k)
			var got []string
			err := c.inTx(ctx, func(tx txn) error {
				found, err := tx.candidates(now, k)
				for _, f := range found {
					got = append(got, fmt.Sprint(f.m.ID))
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != want {
				t.Fatalf("trial %d, %d rows, now %s, k %d: candidates %v, the lesson's SELECT %s", trial, n, now, k, got, want)
			}
		}
	}
}

func mustExec(t *testing.T, c *Conn, q string, args ...any) {
	t.Helper()
	if _, err := c.conn.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatal(err)
	}
}

func lessonIDs(t *testing.T, c *Conn, now string, k int) string {
	t.Helper()
	rows, err := c.conn.QueryContext(context.Background(), lessonClaimSQL, sql.Named("now", now), sql.Named("k", k))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for _, id := range storetest.Column[int64](t, rows) {
		ids = append(ids, fmt.Sprint(id))
	}
	return strings.Join(ids, ",")
}
