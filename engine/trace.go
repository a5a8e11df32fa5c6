package engine

import "time"

// Trace is what one worker action ran on its connection, as the database ran it: each statement
// with its bound values and the rows it touched, then how the transaction ended. A store records
// it where the statements run (Tracer); the engine only carries it on the event, and the one
// renderer (SQLLines) puts it in words. It is data: the engine knows no SQL.
type Trace struct {
	Statements []Statement
	// End is how the transaction ended: EndCommit, EndRollback, or "" for a read that ran
	// outside a transaction (autocommit).
	End string
}

// How a traced transaction ended.
const (
	EndCommit   = "COMMIT"
	EndRollback = "ROLLBACK"
	// EndAutocommit: one statement outside BEGIN, committed on its own (PostgreSQL's claim).
	EndAutocommit = "autocommit"
	// EndOpen: the transaction is still open when the action ends (a two-step claim's lock).
	EndOpen = "open"
)

// Statement is one statement as the database ran it.
type Statement struct {
	// Label says what the statement is for, in the lesson's words: "claim read", "payment
	// update", "guarded outbox update". Set by the store.
	Label string
	// SQL is the statement's text with its bound values written in, on one line.
	SQL string
	// Args are the bound values by name, in the order bound.
	Args []Arg
	// Rows is the rows the statement changed (a write) or returned (a read); RowsUnknown when
	// the database did not say.
	Rows int64
	// Write says the statement changes rows (an UPDATE, INSERT or DELETE).
	Write bool
	// Lock says the statement takes the write lock (on SQLite: BEGIN IMMEDIATE).
	Lock bool
	// Waited says the statement had to wait for the write lock before it could run, and Wait
	// is how long it took in all (wall time, measured by the store).
	Waited bool
	Wait   time.Duration
	// Err is the error the statement ended with, "" when none.
	Err string
}

// RowsUnknown marks a Statement whose rows the database did not report.
const RowsUnknown = -1

// Arg is one bound value.
type Arg struct {
	Name  string
	Value any
}

// Tracer is implemented by a Conn that can record what it runs. SetTrace(t) makes every later
// call append its statements to t and set t.End; SetTrace(nil) stops recording, which must then
// cost next to nothing. The engine calls it from the goroutine that calls the Conn.
type Tracer interface {
	SetTrace(t *Trace)
}

// TraceSQL turns on or off the recording of each action's SQL on the events of the session's
// workers (on connections that are Tracers). Off by default: a long free run would keep every
// statement of every event. Turn it on before the first action.
func (s *Session) TraceSQL(on bool) { s.env.trace.Store(on) }

// traceStart begins recording w's next action, when the session traces and w's connection can.
func (w *Worker) traceStart() *Trace { return startTrace(w.env, w.conn) }

// startTrace begins recording what c runs, when the session traces SQL and c can.
func startTrace(e *env, c Conn) *Trace {
	if !e.trace.Load() {
		return nil
	}
	if !e.caps.Trace {
		return nil
	}
	t := &Trace{}
	c.(Tracer).SetTrace(t)
	return t
}

// traceStop ends the recording traceStart began, and returns it if the action ran anything.
func (w *Worker) traceStop(t *Trace) *Trace { return stopTrace(w.conn, t) }

// stopTrace ends the recording startTrace began on c, and returns it if c ran anything.
func stopTrace(c Conn, t *Trace) *Trace {
	if t == nil {
		return nil
	}
	c.(Tracer).SetTrace(nil) // t is not nil: startTrace found c a Tracer
	if len(t.Statements) == 0 {
		return nil
	}
	return t
}
