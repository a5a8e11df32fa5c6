package store

import (
	"context"
	"database/sql"
	"testing"
)

// execQueryer is a *sql.DB or a *sql.Conn.
type execQueryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// framesRun is the number of messages each frame count processes.
const framesRun = 600

// walFrames runs work on conn for framesRun messages with automatic checkpoints off and returns
// the WAL frames (pages) written per message, read from PRAGMA wal_checkpoint. Unlike a timing,
// the count does not depend on the machine or on what else runs on it.
func walFrames(t *testing.T, conn execQueryer, work func(left *budget, st *workerStats) error) float64 {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		t.Fatal(err)
	}
	var left budget
	left.left.Store(framesRun)
	if err := work(&left, &workerStats{}); err != nil {
		t.Fatal(err)
	}
	var busy, log, copied int
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &copied); err != nil {
		t.Fatal(err)
	}
	return float64(log) / framesRun
}

// TestWALFramesPerMessage pins how many pages each way of working writes per message, the cost
// that decides the speed on one worker (docs/benchmarks.md). A claim writes two pages: the
// row's, and the page of OutboxMessages_Queue where the row's entry moves from the oldest Pending
// row's place to the newest lease's, next to it (2.48 frames, claim + finalize 5.27, fused 3.32).
// Schema 5, whose claim left two indexes (OutboxMessages_Pending and, a row that never failed,
// OutboxMessages_Fresh) and entered a third (OutboxMessages_Leases), wrote four: 4.49 frames,
// claim + finalize 7.30, fused 5.36; schema 4, without the due claim's index of fresh rows,
// three: 3.44, 6.25 and 4.30. Schema 2's single index, on a condition no claim changes, let a
// claim write one page (1.19 frames, claim + finalize 4.27, fused 3.31), but a claim walked
// every live lease older than the first claimable row: quadratic in a run where crashed
// workers' leases pile up. goqite's counts are logged next to them.
func TestWALFramesPerMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("counts frames over a few thousand transactions")
	}
	ctx := context.Background()
	cases := []struct {
		name string
		loop leaselabLoop
		max  float64
	}{
		{"claim", claimOnlyLoop, 2.6},
		{"claim-finalize", claimFinalizeLoop, 5.4},
		{"fused", fusedLoop, 3.45},
		{"batch", batchLoop, 0.65},
	}
	for _, c := range cases {
		db := benchDB(t, benchQueued+framesRun)
		conn := benchConns(t, db, 1, waitSQLite)[0]
		got := walFrames(t, conn.conn, func(left *budget, st *workerStats) error {
			return c.loop(ctx, conn, 0, left, st)
		})
		t.Logf("%-16s %.2f WAL frames per message", c.name, got)
		if got > c.max {
			t.Errorf("%s: %.2f WAL frames per message, want at most %.1f", c.name, got, c.max)
		}
	}
	for _, payment := range []bool{false, true} {
		g := newGoqite(t, run{workers: 1, payment: payment}, benchQueued+framesRun)[0]
		got := walFrames(t, g.pool, func(left *budget, st *workerStats) error {
			return g.loop(ctx, payment, left, st)
		})
		name := "goqite"
		if payment {
			name = "goqite-payment"
		}
		t.Logf("%-16s %.2f WAL frames per message", name, got)
	}
}

// claimOnlyLoop claims messages and never finalizes them.
func claimOnlyLoop(ctx context.Context, c *Conn, w int, left *budget, st *workerStats) error {
	for left.take(1) == 1 {
		if err := st.timed(func() error { _, err := c.Claim(ctx, claimReq(w)); return err }); err != nil {
			return err
		}
		st.done++
	}
	return nil
}
