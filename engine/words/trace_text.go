package words

import (
	"fmt"
	"leaselab/engine"
	"strings"
	"time"
)

// SQLLines puts a trace in words, one line per statement and one for the transaction's end,
// as the report (--sql), the lab's SQL pane and the transcript show it:
//
//	BEGIN IMMEDIATE  → write lock taken at once
//	UPDATE Payments SET PaymentStatus = 'Paid', … WHERE IdempotencyKey = 'PAY-001'  → 1 row  (payment update)
//	UPDATE OutboxMessages SET Status = 'Processed', … WHERE Id = 1 AND Status = 'Processing' AND LockedBy = 'Worker-A' …  → 0 rows  (guarded outbox update (owner))
//	→ ROLLBACK (the payment update is undone too)
//
// None for a nil trace.
func SQLLines(t *engine.Trace) []string {
	if t == nil {
		return nil
	}
	var out []string
	var undone []string // writes that changed rows, which a ROLLBACK undoes
	for _, st := range t.Statements {
		out = append(out, StatementLine(st))
		if st.Write && st.Rows > 0 && st.Err == "" {
			undone = append(undone, "the "+strings.TrimPrefix(st.Label, "the "))
		}
	}
	switch t.End {
	case engine.EndCommit:
		out = append(out, "→ COMMIT")
	case engine.EndRollback:
		line := "→ ROLLBACK"
		if len(undone) > 0 {
			line += fmt.Sprintf(" (%s %s undone too)", strings.Join(undone, " and "), map[bool]string{true: "is", false: "are"}[len(undone) == 1])
		}
		out = append(out, line)
	case engine.EndAutocommit:
		out = append(out, "→ no BEGIN: each statement was a transaction of its own, committed as it ran")
	case engine.EndOpen:
		out = append(out, "→ the transaction stays open (its locks with it)")
	default:
		out = append(out, "(autocommit: no transaction)")
	}
	return out
}

// StatementLine is one statement in words: its SQL with the values bound, then what it did.
func StatementLine(st engine.Statement) string {
	var b strings.Builder
	b.WriteString(st.SQL)
	switch {
	case st.Lock && st.Waited:
		fmt.Fprintf(&b, "  → waited %s for the write lock", st.Wait.Round(time.Millisecond))
	case st.Lock:
		b.WriteString("  → write lock taken at once")
	default:
		if st.Waited { // a row lock (PostgreSQL)
			fmt.Fprintf(&b, "  → waited %s for a row lock", st.Wait.Round(time.Millisecond))
		}
		if st.Rows != engine.RowsUnknown {
			fmt.Fprintf(&b, "  → %d %s", st.Rows, Plural(int(st.Rows), "row"))
		}
	}
	if st.Err != "" {
		b.WriteString("  → error: " + st.Err)
	}
	if st.Label != "" && !st.Lock {
		b.WriteString("  (" + st.Label + ")")
	}
	return b.String()
}
