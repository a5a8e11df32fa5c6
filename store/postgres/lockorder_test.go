package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5"
)

// The one-statement finalizes keep the lesson's lock order: a message's payment is locked before
// its outbox row, and a batch locks every payment (in key order) before any outbox row. The test
// holds one payment locked from outside, starts the finalize (which must wait for it), and then
// proves what the waiting finalize holds: every outbox row of the request can still be locked
// at once (NOWAIT), and in a batch the payments before the held one (in key order) cannot.
func TestOneStatementFinalizeLocksPaymentsFirst(t *testing.T) {
	for _, tc := range []struct {
		name   string
		batch  bool
		held   string   // the payment the outside transaction holds
		before []string // payments the waiting finalize must hold already
	}{
		{name: "Finalize", held: "PAY-001"},
		{name: "FinalizeBatch", batch: true, held: "PAY-002", before: []string{"PAY-001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := seededDB(t, 3)
			ctx := context.Background()
			conn, err := db.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			c := conn.(storetest.Batcher)
			n := 1
			if tc.batch {
				n = 3
			}
			msgs, err := c.ClaimBatch(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0.Add(time.Minute)}, n)
			if err != nil || len(msgs) != n {
				t.Fatalf("claim: %v %v", msgs, err)
			}
			reqs := make([]engine.FinalizeRequest, n)
			for i, m := range msgs {
				reqs[i] = engine.FinalizeRequest{Worker: "Worker-A", Message: m, Now: t0, PaymentStatus: engine.PaymentPaid,
					TransactionID: "txn_" + m.IdempotencyKey, OwnershipCheck: true, Fencing: true}
			}
			holder := rawConn(t, db)
			htx, err := holder.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer htx.Rollback(ctx)
			if _, err := htx.Exec(ctx, "SELECT 1 FROM Payments WHERE IdempotencyKey = $1 FOR UPDATE", tc.held); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				var err error
				var res []engine.FinalizeResult
				if tc.batch {
					res, err = c.FinalizeBatch(ctx, reqs)
				} else {
					var r engine.FinalizeResult
					r, err = c.Finalize(ctx, reqs[0])
					res = []engine.FinalizeResult{r}
				}
				for _, r := range res {
					if err == nil && !r.Committed {
						err = fmt.Errorf("finalize not committed: %+v", r)
					}
				}
				done <- err
			}()
			probe := rawConn(t, db)
			waitForLockWait(t, probe, holder)
			// Nothing of the outbox is locked by the waiting finalize.
			for _, m := range msgs {
				tryLock(t, probe, "OutboxMessages", "Id", m.ID, true)
			}
			for _, key := range tc.before {
				tryLock(t, probe, "Payments", "IdempotencyKey", key, false)
			}
			if err := htx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the finalize did not finish after the payment was released")
			}
		})
	}
}

// waitForLockWait waits until a connection waits for a lock that holder's transaction holds.
func waitForLockWait(t *testing.T, probe, holder *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var n int
		err := probe.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))`,
			holder.PgConn().PID()).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatal("the finalize never waited for the held payment")
}

// tryLock locks table's row where col = v with NOWAIT in a transaction of its own and rolls it
// back; want says whether it must succeed.
func tryLock(t *testing.T, probe *pgx.Conn, table, col string, v any, want bool) {
	t.Helper()
	ctx := context.Background()
	tx, err := probe.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, "SELECT 1 FROM "+table+" WHERE "+col+" = $1 FOR UPDATE NOWAIT", v)
	if got := err == nil; got != want {
		t.Fatalf("lock %s %s = %v: got err %v, want lockable = %v", table, col, v, err, want)
	}
}
