package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The SQL trace on PostgreSQL (engine.Tracer): pgx hands every statement a connection sends,
// alone or in a batch, to the connection's tracer, with its bound values, the command tag the
// server answered (rows) and the error. The tracer records them while the engine traces, turns
// BEGIN … COMMIT/ROLLBACK into the trace's end, and otherwise costs one nil check a statement.

// tracer is one connection's pgx.QueryTracer and pgx.BatchTracer.
type tracer struct {
	t     *engine.Trace // nil: not recording
	cur   int           // the statement in flight (TraceQueryStart → TraceQueryEnd), -1 when none
	start time.Time
	inTx  bool // a BEGIN was seen and no COMMIT or ROLLBACK yet
}

var (
	_ pgx.QueryTracer = (*tracer)(nil)
	_ pgx.BatchTracer = (*tracer)(nil)
	_ engine.Tracer   = (*Conn)(nil)
)

// SetTrace implements engine.Tracer. Ending a recording (nil) says how its transaction ended
// when no COMMIT or ROLLBACK did: still open (a two-step claim between its steps), or one
// statement committed on its own.
func (c *Conn) SetTrace(t *engine.Trace) {
	tr := c.tracer
	if t == nil && tr.t != nil && tr.t.End == "" && len(tr.t.Statements) > 0 {
		if tr.inTx {
			tr.t.End = engine.EndOpen
		} else {
			tr.t.End = engine.EndAutocommit
		}
	}
	tr.t, tr.cur = t, -1
}

// TraceQueryStart records a statement as it is sent.
func (tr *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if tr.t != nil {
		tr.cur, tr.start = tr.add(d.SQL, d.Args), time.Now()
	}
	return ctx
}

// TraceQueryEnd records what the statement did.
func (tr *tracer) TraceQueryEnd(_ context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	if tr.t != nil && tr.cur >= 0 {
		tr.done(tr.cur, d.CommandTag, d.Err)
		tr.t.Statements[max(tr.cur, 0)].Wait = time.Since(tr.start)
	}
	tr.cur = -1
}

// TraceBatchStart: the batch's statements are recorded one by one (TraceBatchQuery).
func (tr *tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery records one statement of a batch, with what it did.
func (tr *tracer) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	if tr.t != nil {
		tr.done(tr.add(d.SQL, d.Args), d.CommandTag, d.Err)
	}
}

// TraceBatchEnd: nothing to add.
func (tr *tracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// add appends a statement, or takes a transaction's BEGIN, COMMIT or ROLLBACK; it returns the
// statement's index, -1 for a COMMIT or ROLLBACK (the trace's end).
func (tr *tracer) add(sql string, args []any) int {
	switch strings.ToUpper(strings.TrimSpace(sql)) {
	case "COMMIT":
		tr.t.End, tr.inTx = engine.EndCommit, false
		return -1
	case "ROLLBACK":
		tr.t.End, tr.inTx = engine.EndRollback, false
		return -1
	case "BEGIN":
		if end := tr.t.End; end == engine.EndCommit || end == engine.EndRollback {
			// A transaction ended and another begins within the action: the first end is a line.
			tr.t.Statements = append(tr.t.Statements, engine.Statement{SQL: end, Rows: engine.RowsUnknown})
		}
		tr.inTx, tr.t.End = true, ""
		tr.t.Statements = append(tr.t.Statements, engine.Statement{SQL: "BEGIN", Rows: engine.RowsUnknown})
		return len(tr.t.Statements) - 1
	}
	tr.t.Statements = append(tr.t.Statements, engine.Statement{Label: pgLabel(sql), SQL: bindPG(sql, args),
		Args: pgArgs(args), Rows: engine.RowsUnknown, Write: pgWrite(sql)})
	return len(tr.t.Statements) - 1
}

// done fills statement i's rows and error from the server's answer.
func (tr *tracer) done(i int, tag pgconn.CommandTag, err error) {
	if i < 0 {
		return
	}
	st := &tr.t.Statements[i]
	switch {
	case err != nil:
		st.Err = err.Error() // the server's own words: "could not obtain lock on row … (SQLSTATE 55P03)"
	case tag.Update() || tag.Insert() || tag.Delete() || tag.Select():
		st.Rows = tag.RowsAffected()
	}
}

// markWaited notes, on the statement just recorded, that it waited for a row lock for d
// (known, not guessed: a NOWAIT read before it met the lock).
func (c *Conn) markWaited(d time.Duration) {
	if t := c.tracer.t; t != nil && len(t.Statements) > 0 {
		st := &t.Statements[len(t.Statements)-1]
		st.Waited, st.Wait = true, d
	}
}

// traceOutcome rewrites, on the one-statement finalize just recorded, the rows its answer had
// (one row: the answer) into the outbox rows it changed, and says what the guard decided.
func (c *Conn) traceOutcome(changed int64, held bool) {
	t := c.tracer.t
	if t == nil || len(t.Statements) == 0 {
		return
	}
	st := &t.Statements[len(t.Statements)-1]
	st.Rows = changed
	if held {
		st.Label += ": the guard held, payment and outbox written"
	} else {
		st.Label += ": the guard changed no row, so nothing was written (the payment neither)"
	}
}

// pgLabels names the statements the lessons talk about.
var pgLabels = map[string]string{
	ClaimSQL:                       "claim: pick the oldest claimable row, SKIP LOCKED, and take it",
	ClaimDueSQL:                    "due claim: pick the oldest claimable row past its backoff, SKIP LOCKED, and take it",
	dueBlockerSQL:                  "why nothing is due: the lease or backoff that ends first",
	failSQL:                        "failed attempt: guarded release (Pending after the backoff, or DeadLettered)",
	expiredLeasesSQL:               "rescuer: read the leases that have ended",
	rescueGuardedSQL:               "guarded rescue (owner and lease version seen)",
	rescueUnguardedSQL:             "unguarded rescue: the row by Id alone",
	CandidateSQL:                   "claim read: the oldest claimable row (no lock)",
	keyedSQL:                       "claim read: the named message, locked",
	keyedUpdateSQL:                 "claim: conditional UPDATE on the version read",
	blockerSQL:                     "why nothing is claimable: the lease that ends first",
	lockPickSQL(true):              "claim, locking read: the oldest claimable row, passing over locked ones",
	lockPickSQL(false):             "claim, locking read: wait for the oldest claimable row's lock",
	lockPickSQL(false) + " NOWAIT": "claim: is the oldest claimable row locked? (NOWAIT)",
	holderSQL:                      "whose transaction holds the row lock (xmax, pg_stat_activity)",
	lockedRowSQL:                   "which row is locked: the oldest claimable (a plain read)",
	finalizePaymentSQL:             "payment update",
	finalizeReadSQL:                "read the row as it is now, locked",
	finalizeOneFenced:              "finalize in one statement: payment, then the outbox guarded by owner and lease version",
	finalizeOneUnfenced:            "finalize in one statement: payment, then the outbox guarded by owner",
	lockRowSQL:                     "lock the row (the time is read after the wait)",
	lockRowSQL + " NOWAIT":         "lock the row, or give up at once if another transaction holds it (NOWAIT)",
	`SELECT set_config('application_name', $1, false)`: "name the connection, so that others can say whose lock it is",
	`SELECT set_config('lock_timeout', $1, true)`:      "how long this transaction waits for a lock",
}

func pgLabel(sql string) string {
	if l, ok := pgLabels[sql]; ok {
		return l
	}
	if strings.HasPrefix(sql, "UPDATE OutboxMessages\n   SET Status = 'Processed'") {
		return "outbox update"
	}
	return shared.Verb(sql)
}

// pgWrite reports whether sql changes rows: an UPDATE, INSERT or DELETE, also inside a WITH.
func pgWrite(sql string) bool {
	up := strings.ToUpper(sql)
	f := strings.Fields(up)
	if len(f) == 0 {
		return false
	}
	switch f[0] {
	case "UPDATE", "INSERT", "DELETE":
		return true
	case "WITH":
		return strings.Contains(up, "UPDATE ") || strings.Contains(up, "INSERT ") || strings.Contains(up, "DELETE ")
	}
	return false
}

func pgArgs(args []any) []engine.Arg {
	if len(args) == 0 {
		return nil
	}
	return shared.Args(args, nil)
}

// bindPG is sql on one line with $1, $2, … replaced by the values bound to them, as
// PostgreSQL literals.
func bindPG(sql string, args []any) string {
	return shared.OneLine(sql, func(q string, i int) (string, int, bool) {
		if q[i] != '$' {
			return "", 0, false
		}
		j, n := i+1, 0
		for ; j < len(q) && q[j] >= '0' && q[j] <= '9'; j++ {
			n = n*10 + int(q[j]-'0')
		}
		if n < 1 || n > len(args) {
			return "", 0, false
		}
		return pgLiteral(args[n-1]), j, true
	})
}

// pgLiteral writes v as PostgreSQL would read it back.
func pgLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case *string:
		if x == nil {
			return "NULL"
		}
		return pgLiteral(*x)
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case bool:
		return fmt.Sprint(x)
	case time.Time:
		return "'" + x.UTC().Format("2006-01-02T15:04:05.000Z") + "'"
	case []int64, []string, []bool, []time.Time, []*string:
		return "ARRAY" + strings.ReplaceAll(fmt.Sprintf("%q", v), " ", ", ")
	}
	return fmt.Sprint(v)
}
