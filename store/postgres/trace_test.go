package postgres_test

import (
	"context"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/engine/words"
)

// traced runs fn on c with a trace on and returns the trace in words.
func traced(t *testing.T, c engine.Conn, fn func()) (*engine.Trace, string) {
	t.Helper()
	tr := &engine.Trace{}
	c.(engine.Tracer).SetTrace(tr)
	fn()
	c.(engine.Tracer).SetTrace(nil)
	return tr, strings.Join(words.SQLLines(tr), "\n")
}

// The SQL trace on PostgreSQL is what the server ran: the claim as one statement with its values
// bound, committed on its own; the two-step claim's open transaction; the waiting claim's NOWAIT
// that met the lock (the server's own error), its wait, and both its transactions' ends; a
// rejected finalize that wrote nothing. With the trace off nothing is recorded.
func TestTraceOnPostgres(t *testing.T) {
	db := seededDB(t, 3)
	ctx := context.Background()
	a, b := rowLocker(t, db).(engine.Conn), rowLocker(t, db).(engine.Conn)

	tr, words := traced(t, b, func() { b.Claim(ctx, claimReq("Worker-B", false)) })
	if tr.End != engine.EndAutocommit || len(tr.Statements) != 1 || tr.Statements[0].Rows != 1 ||
		!strings.Contains(words, "LockedBy = 'Worker-B'") || !strings.Contains(words, "FOR UPDATE SKIP LOCKED") {
		t.Fatalf("claim trace (%s):\n%s", tr.End, words)
	}

	tr, words = traced(t, a, func() { a.(engine.RowLocker).LockClaim(ctx, claimReq("Worker-A", false)) })
	if tr.End != engine.EndOpen || !strings.Contains(words, "BEGIN") || !strings.Contains(words, "→ the transaction stays open") {
		t.Fatalf("lock trace (%s):\n%s", tr.End, words)
	}

	c := rowLocker(t, db).(engine.Conn)
	_, words = traced(t, c, func() { c.Claim(ctx, claimReq("Worker-C", true)) })
	for _, want := range []string{
		"FOR UPDATE NOWAIT  → error: ERROR: could not obtain lock on row",
		"(SQLSTATE 55P03)",
		"\nROLLBACK\nBEGIN\n",
		"SELECT set_config('lock_timeout', '150ms', true)",
		"for a row lock",
		"→ ROLLBACK",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("the waiting claim's trace lacks %q:\n%s", want, words)
		}
	}

	won, err := b.Claim(ctx, claimReq("Worker-B", false))
	if err != nil || won.Outcome != engine.ClaimWon {
		t.Fatalf("claim: %+v %v", won, err)
	}
	stale := engine.FinalizeRequest{Worker: "Worker-X", Message: won.Message, Now: t0, PaymentStatus: engine.PaymentPaid,
		TransactionID: "txn", OwnershipCheck: true}
	tr, words = traced(t, b, func() { b.Finalize(ctx, stale) })
	if st := tr.Statements[len(tr.Statements)-1]; st.Rows != 0 || !st.Write || !strings.Contains(words, "nothing was written") {
		t.Fatalf("a rejected finalize's trace:\n%s", words)
	}

	quiet := &engine.Trace{}
	b.(engine.Tracer).SetTrace(quiet)
	b.(engine.Tracer).SetTrace(nil)
	b.Claim(ctx, claimReq("Worker-B", false))
	if len(quiet.Statements) != 0 {
		t.Fatalf("recorded with the trace off: %+v", quiet)
	}
}
