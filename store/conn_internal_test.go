package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
)

// When a failed transaction cannot even be rolled back, the worker's SQLite connection is closed
// for real: the write lock is free for the other workers at once, and the broken Conn says so on
// every later call instead of running inside the failed transaction.
func TestFailedRollbackClosesTheConnection(t *testing.T) {
	ctx := context.Background()
	db := benchDB(t, 4)
	conns := benchConns(t, db, 2, waitSQLite)
	a, b := conns[0], conns[1]
	a.rollback.Close() // the ROLLBACK of a's next failed transaction fails
	boom := errors.New("boom")
	err := a.inTx(ctx, func(t txn) error {
		if _, err := t.exec(claimUpdateSQL, nil, nil, nil, nil, nil); err == nil {
			return errors.New("claim update with no arguments worked")
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("inTx = %v, want the function's error", err)
	}
	quick, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	res, err := b.Claim(quick, engine.ClaimRequest{Worker: "Worker-B", Now: benchT0, Until: benchT0.Add(time.Second)})
	if err != nil || res.Outcome != engine.ClaimWon {
		t.Fatalf("another worker's claim after the failed rollback: %+v, %v (is the write lock still held?)", res, err)
	}
	_, err = a.Claim(ctx, engine.ClaimRequest{Worker: "Worker-A", Now: benchT0, Until: benchT0.Add(time.Second)})
	if err == nil || !strings.Contains(err.Error(), "failed rollback") {
		t.Fatalf("the broken connection's next claim: %v, want the failed-rollback error", err)
	}
}
