package engine_test

import (
	"context"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/engine/words"
)

// TestStaleOwnerTraceShowsTheRejectedUpdate runs stale-owner with the SQL traced: the paused
// owner's finalize ran the guarded UPDATE as the database ran it (with Worker-A bound), it
// changed 0 rows, and the transaction rolled back, undoing the payment update.
func TestStaleOwnerTraceShowsTheRejectedUpdate(t *testing.T) {
	s := session(t, loadScenario(t, "stale-owner", ""))
	s.TraceSQL(true)
	if err := s.Script().RunToEnd(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rejected *engine.Event
	for _, e := range s.Ledger().Events() {
		if e.Kind == engine.EvFinalize && e.Outcome == engine.OutcomeRejected {
			rejected = &e
		}
	}
	if rejected == nil || rejected.Trace == nil {
		t.Fatalf("no traced rejected finalize: %+v", rejected)
	}
	tr := rejected.Trace
	if tr.End != engine.EndRollback {
		t.Fatalf("end %q, want ROLLBACK", tr.End)
	}
	var guarded *engine.Statement
	for i, st := range tr.Statements {
		if strings.HasPrefix(st.SQL, "UPDATE OutboxMessages") {
			guarded = &tr.Statements[i]
		}
	}
	if guarded == nil {
		t.Fatalf("no outbox UPDATE in %v", words.SQLLines(tr))
	}
	for _, want := range []string{"WHERE Id = 1 AND Status = 'Processing' AND LockedBy = 'Worker-A'", "SET Status = 'Processed'"} {
		if !strings.Contains(guarded.SQL, want) {
			t.Errorf("guarded UPDATE %q lacks %q", guarded.SQL, want)
		}
	}
	if guarded.Rows != 0 || !guarded.Write {
		t.Errorf("guarded UPDATE rows %d write %v, want 0 rows, a write", guarded.Rows, guarded.Write)
	}
	text := strings.Join(words.SQLLines(tr), "\n")
	t.Log("\n" + text)
	for _, want := range []string{"LockedBy = 'Worker-A'", "→ 0 rows", "→ ROLLBACK (the payment update is undone too)",
		"BEGIN IMMEDIATE  → write lock taken at once"} {
		if !strings.Contains(text, want) {
			t.Errorf("trace lacks %q:\n%s", want, text)
		}
	}
	// Worker-B's finalize committed, and its claim is the reclaim's conditional UPDATE.
	var committed, reclaim string
	for _, e := range s.Ledger().Events() {
		switch {
		case e.Kind == engine.EvFinalize && e.Outcome == engine.OutcomeCommitted:
			committed = strings.Join(words.SQLLines(e.Trace), "\n")
		case e.Kind == engine.EvClaim && e.Outcome == engine.OutcomeReclaimed:
			reclaim = strings.Join(words.SQLLines(e.Trace), "\n")
		}
	}
	if !strings.HasSuffix(committed, "→ COMMIT") || !strings.Contains(committed, "LockedBy = 'Worker-B'") {
		t.Errorf("Worker-B's finalize:\n%s", committed)
	}
	if !strings.Contains(reclaim, "LeaseVersion = 1") || !strings.Contains(reclaim, "→ 1 row") {
		t.Errorf("reclaim:\n%s", reclaim)
	}
}

// TestTraceOffRecordsNothing: without TraceSQL no event carries SQL.
func TestTraceOffRecordsNothing(t *testing.T) {
	s := session(t, loadScenario(t, "stale-owner", ""))
	if err := s.Script().RunToEnd(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Ledger().Events() {
		if e.Trace != nil {
			t.Fatalf("event %d has a trace with tracing off", e.Seq)
		}
	}
}
