package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
)

// traced runs fn with c tracing into a fresh trace, and returns it.
func traced(t *testing.T, c engine.Conn, fn func()) *engine.Trace {
	t.Helper()
	tc, ok := c.(engine.Tracer)
	if !ok {
		t.Fatal("store.Conn is not an engine.Tracer")
	}
	tr := &engine.Trace{}
	tc.SetTrace(tr)
	fn()
	tc.SetTrace(nil)
	return tr
}

// TestTraceOfARejectedFinalize: a non-owner's guarded finalize is recorded as it ran: the
// payment UPDATE (1 row), the guarded outbox UPDATE with the worker bound (0 rows), the read
// that says why, and the ROLLBACK. With the trace off again, nothing more is recorded.
func TestTraceOfARejectedFinalize(t *testing.T) {
	db := newDB(t, 1)
	a, b := connect(t, db), connect(t, db)
	ctx := context.Background()
	won, err := a.Claim(ctx, claimFor("Worker-A"))
	if err != nil || won.Outcome != engine.ClaimWon {
		t.Fatal(won, err)
	}
	tr := traced(t, b, func() {
		res, err := b.Finalize(ctx, engine.FinalizeRequest{Worker: "Worker-B", Message: won.Message, Now: t0,
			PaymentStatus: engine.PaymentPaid, TransactionID: "txn_x", OwnershipCheck: true})
		if err != nil || res.Committed {
			t.Fatalf("finalize %+v %v, want rolled back", res, err)
		}
	})
	if tr.End != engine.EndRollback || len(tr.Statements) != 4 {
		t.Fatalf("trace:\n%s", strings.Join(words.SQLLines(tr), "\n"))
	}
	begin, pay, guarded, read := tr.Statements[0], tr.Statements[1], tr.Statements[2], tr.Statements[3]
	if !begin.Lock || begin.Waited {
		t.Errorf("BEGIN %+v: want the lock, taken at once", begin)
	}
	if pay.Label != "payment update" || pay.Rows != 1 || !pay.Write ||
		pay.SQL != "UPDATE Payments SET PaymentStatus = 'Paid', TransactionId = 'txn_x' WHERE IdempotencyKey = 'PAY-001'" {
		t.Errorf("payment update %+v", pay)
	}
	if guarded.Rows != 0 || !strings.Contains(guarded.SQL, "WHERE Id = 1 AND Status = 'Processing' AND LockedBy = 'Worker-B'") {
		t.Errorf("guarded update %+v", guarded)
	}
	if read.Write || read.Rows != 1 || !strings.HasPrefix(read.SQL, "SELECT Status, LockedBy, LeaseVersion") {
		t.Errorf("read %+v", read)
	}
	if got := words.SQLLines(tr); got[len(got)-1] != "→ ROLLBACK (the payment update is undone too)" {
		t.Errorf("last line %q", got[len(got)-1])
	}
	// Off again: the owner's finalize records nothing anywhere.
	if _, err := a.Finalize(ctx, engine.FinalizeRequest{Worker: "Worker-A", Message: won.Message, Now: t0,
		PaymentStatus: engine.PaymentPaid, OwnershipCheck: true}); err != nil {
		t.Fatal(err)
	}
	if len(tr.Statements) != 4 {
		t.Errorf("trace grew after SetTrace(nil): %d statements", len(tr.Statements))
	}
}

// TestTraceSaysWhenItWaitedForTheLock: with another connection holding the write lock, a
// traced claim's BEGIN IMMEDIATE is marked Waited, with about the time it waited; alone, not.
func TestTraceSaysWhenItWaitedForTheLock(t *testing.T) {
	db := newDB(t, 2)
	c := connect(t, db)
	ctx := context.Background()
	hc := takeWriteLock(t, db)
	const hold = 150 * time.Millisecond
	released := make(chan error, 1)
	go func() {
		time.Sleep(hold)
		_, err := hc.ExecContext(ctx, "ROLLBACK")
		released <- err
	}()
	tr := traced(t, c, func() {
		if res, err := c.Claim(ctx, claimFor("Worker-A")); err != nil || res.Outcome != engine.ClaimWon {
			t.Fatal(res, err)
		}
	})
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	begin := tr.Statements[0]
	if !begin.Lock || !begin.Waited || begin.Wait < hold/2 {
		t.Fatalf("BEGIN %+v: want waited about %s", begin, hold)
	}
	if line := words.StatementLine(begin); !strings.Contains(line, "→ waited ") || !strings.Contains(line, "for the write lock") {
		t.Errorf("line %q", line)
	}
	tr = traced(t, c, func() {
		if _, err := c.Claim(ctx, claimFor("Worker-A")); err != nil {
			t.Fatal(err)
		}
	})
	if tr.Statements[0].Waited || tr.End != engine.EndCommit {
		t.Errorf("uncontended claim: %+v, end %q", tr.Statements[0], tr.End)
	}
}

// TestTraceBindsValuesAsLiterals: a bound string with a quote is written as SQLite reads it.
func TestTraceBindsValuesAsLiterals(t *testing.T) {
	db := newDB(t, 1)
	c := connect(t, db)
	tr := traced(t, c, func() {
		if _, err := c.Claim(context.Background(), engine.ClaimRequest{Worker: "W", Now: t0, Until: t0.Add(time.Second), Key: "O'Brien"}); err == nil {
			t.Fatal("claim of a missing key succeeded")
		}
	})
	if len(tr.Statements) < 2 || !strings.HasSuffix(tr.Statements[1].SQL, "WHERE IdempotencyKey = 'O''Brien' ORDER BY Id LIMIT 1") ||
		tr.Statements[1].Rows != 0 || tr.End != engine.EndRollback {
		t.Fatalf("trace:\n%s", strings.Join(words.SQLLines(tr), "\n"))
	}
}
