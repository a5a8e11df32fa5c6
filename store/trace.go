package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"
)

// SetTrace implements engine.Tracer: with t set, every statement the connection runs is
// appended to t as the database ran it, and each transaction's end is written to t.End. With
// nil (the default) the statements run as before, behind one nil check each.
func (c *Conn) SetTrace(t *engine.Trace) { c.trace = t }

var _ engine.Tracer = (*Conn)(nil)

// row is a *sql.Row whose Scan records, when the connection traces, how many rows came back.
type row struct {
	r  *sql.Row
	tr *engine.Trace
	i  int
}

// Scan is (*sql.Row).Scan.
func (r row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if r.tr != nil {
		st := &r.tr.Statements[r.i]
		switch {
		case err == nil:
			st.Rows = 1
		case errors.Is(err, sql.ErrNoRows):
			st.Rows = 0
		default:
			st.Rows, st.Err = engine.RowsUnknown, describe(err).Error()
		}
	}
	return err
}

// record appends query, run with args, to the connection's trace and returns its index.
func (c *Conn) record(query string, args []any) int {
	c.trace.Statements = append(c.trace.Statements, engine.Statement{
		Label: stmtLabel(query), SQL: bindSQL(query, args), Args: traceArgs(args),
		Rows: engine.RowsUnknown, Write: isWrite(query)})
	return len(c.trace.Statements) - 1
}

// recordResult fills the rows and error of statement i from an Exec's result.
func (c *Conn) recordResult(i int, r sql.Result, err error) {
	st := &c.trace.Statements[i]
	if err != nil {
		st.Err = describe(err).Error()
		return
	}
	if n, err := r.RowsAffected(); err == nil {
		st.Rows = n
	}
}

// beginTraced is BEGIN IMMEDIATE when the connection traces: it first tries the lock with
// busy_timeout 0, so that whether the transaction waited for the write lock is known rather
// than guessed from a duration, then, if the lock was taken, waits for it as usual. (The two
// PRAGMAs cannot be prepared once: SQLite applies busy_timeout when the PRAGMA is prepared.)
func (c *Conn) beginTraced(ctx context.Context, gateWait time.Duration) error {
	i := c.record(beginSQL, nil)
	st := &c.trace.Statements[i]
	st.Lock = true
	start := time.Now()
	_, err := c.conn.ExecContext(ctx, `PRAGMA busy_timeout = 0`)
	if err == nil {
		_, err = c.begin.ExecContext(ctx)
		if _, rerr := c.conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, BusyTimeout.Milliseconds())); rerr != nil && err == nil {
			c.rollbackAfter(txn{ctx: ctx, c: c})
			err = rerr
		}
	}
	if err != nil && errors.Is(describe(err), engine.ErrBusy) {
		st.Waited = true
		_, err = c.begin.ExecContext(ctx)
	}
	st.Wait = gateWait + time.Since(start)
	st.Waited = st.Waited || gateWait > time.Millisecond
	if err != nil {
		st.Err = describe(err).Error()
	}
	return err
}

// stmtLabels names the statements the lesson talks about.
var stmtLabels = map[string]string{
	ClaimReadSQL:                    "claim read: the oldest Pending row, and the oldest whose lease ended first",
	ClaimExpiredSQL:                 "claim read: the oldest row whose lease ended next",
	keyedCandidateSQL:               "claim read: the named message",
	claimUpdateSQL:                  "claim: conditional UPDATE on the version read",
	blockerSQL:                      "why nothing is claimable: the lease that ends first",
	finalizeReadSQL:                 "read the row as it is now",
	finalizePaymentSQL:              "payment update",
	finalizeOutboxSQL(false, false): "outbox update, no ownership check",
	finalizeOutboxSQL(true, false):  "guarded outbox update (owner)",
	finalizeOutboxSQL(false, true):  "outbox update (lease version)",
	finalizeOutboxSQL(true, true):   "guarded outbox update (owner and lease version)",
	takeSQL:                         "unconditional take: no check on status or lease",
	renewSQL:                        "heartbeat: guarded lease extension",
	loadPendingSQL:                  "naive load: every Pending row, no claim",
	beginSQL:                        "take the write lock",
	ClaimBatchSQL:                   "batch claim",
	ClaimDueReadSQL:                 "find the oldest due row (Pending after its backoff) and the oldest ended lease",
	claimDueUpdateSQL:               "take it only if it is still claimable and due",
	dueBlockerSQL:                   "why nothing is due: the lease or backoff that ends first",
	failSQL:                         "failed attempt: guarded release (Pending after the backoff, or DeadLettered)",
	expiredLeasesSQL:                "rescuer: read the leases that have ended",
	rescueGuardedSQL:                "guarded rescue (owner and lease version seen)",
	rescueUnguardedSQL:              "unguarded rescue: the row by Id alone",
}

func stmtLabel(query string) string {
	if l, ok := stmtLabels[query]; ok {
		return l
	}
	return shared.Verb(query)
}

func isWrite(query string) bool {
	f := strings.Fields(query)
	if len(f) == 0 {
		return false
	}
	switch strings.ToUpper(f[0]) {
	case "UPDATE", "INSERT", "DELETE", "REPLACE":
		return true
	}
	return false
}

func traceArgs(args []any) []engine.Arg {
	if len(args) == 0 {
		return nil
	}
	return shared.Args(args, func(a any) (engine.Arg, bool) {
		n, ok := a.(sql.NamedArg)
		return engine.Arg{Name: n.Name, Value: n.Value}, ok
	})
}

// bindSQL is query on one line with its parameters (:name, or ? in order) replaced by the
// values bound to them, written as SQLite literals.
func bindSQL(query string, args []any) string {
	named := map[string]any{}
	var positional []any
	for _, a := range args {
		if n, ok := a.(sql.NamedArg); ok {
			named[n.Name] = n.Value
		} else {
			positional = append(positional, a)
		}
	}
	return shared.OneLine(query, func(q string, i int) (string, int, bool) {
		switch {
		case q[i] == ':' && i+1 < len(q) && isIdent(q[i+1]):
			j := i + 1
			for j < len(q) && isIdent(q[j]) {
				j++
			}
			if v, ok := named[q[i+1:j]]; ok {
				return sqlLiteral(v), j, true
			}
		case q[i] == '?' && len(positional) > 0:
			v := positional[0]
			positional = positional[1:]
			return sqlLiteral(v), i + 1, true
		}
		return "", 0, false
	})
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// sqlLiteral writes v as SQLite would read it back.
func sqlLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case []byte:
		return fmt.Sprintf("X'%X'", x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case time.Time:
		return "'" + FormatTime(x) + "'"
	}
	return fmt.Sprint(v)
}
