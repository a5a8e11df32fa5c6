package explore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"leaselab/engine"
)

// The tape is how a state is restored without running its schedule's transactions again. Every
// call the engine makes on the database while a transition runs is recorded with its answer;
// to stand at a state again, the database is restored from its copy and a new session of the
// scenario is driven through the state's schedule in memory, each call answered from the tape.
// The engine is deterministic given its database's answers (the scenario clock, the seeded
// sources, the provider's rule: what the lab's step back relies on), so the session's memory
// comes out as it was.

// mode is what the tape does with a call.
type mode int

const (
	// live: the call goes to the database and is recorded with its answer.
	live mode = iota
	// replay: the call is answered from the tape; the database is not touched.
	replay
	// direct: the call goes to the database and is not recorded (the checks and the state's
	// rows, read after a transition).
	direct
)

// call is one recorded call and its answer.
type call struct {
	op  string
	val any
	err error
}

// errDiverged is returned when a replayed session asks the tape for a call other than the one
// recorded: the engine did not do what it did the first time.
var errDiverged = errors.New("explore: the replay diverged from the recording")

// tapeDB is the engine.DB the explorer's sessions run on: the real database behind a tape.
type tapeDB struct {
	real engine.DB
	mode mode
	rec  []call   // live: the calls recorded since the last take
	play [][]call // replay: the segments still to hand back, in order
	pos  int      // replay: the next call of play[0]
	free []engine.Conn
	open []*tapeConn // the connections of the current session
	// reads are the answers of the whole-database reads (rows, counts, transaction ids) made
	// since the database last changed: the same read asked again, with no write or restore
	// between, has the same answer, and is not asked of the database twice.
	reads map[string]any
}

var _ engine.DB = (*tapeDB)(nil)

func newTapeDB(real engine.DB) *tapeDB { return &tapeDB{real: real} }

// begin starts a new session's tape: the previous session's connections are given up (their
// real connections go back to the pool), and the segments are what replay hands back.
func (t *tapeDB) begin(m mode, segments [][]call) {
	for _, c := range t.open {
		c.release()
	}
	t.open, t.mode, t.rec, t.pos = t.open[:0], m, nil, 0
	t.play = append(t.play[:0], segments...)
}

// take returns the calls recorded since the last take.
func (t *tapeDB) take() []call {
	r := t.rec
	t.rec = nil
	return r
}

// drained reports whether replay has handed back every recorded call.
func (t *tapeDB) drained() bool {
	for len(t.play) > 0 && t.pos >= len(t.play[0]) {
		t.play, t.pos = t.play[1:], 0
	}
	return len(t.play) == 0
}

// next hands back the next recorded call, which must be op.
func (t *tapeDB) next(op string) (any, error) {
	if t.drained() {
		return nil, fmt.Errorf("%w: %s past the end of the tape", errDiverged, op)
	}
	c := t.play[0][t.pos]
	t.pos++
	if c.op != op {
		return nil, fmt.Errorf("%w: %s where the recording has %s", errDiverged, op, c.op)
	}
	return c.val, c.err
}

// do runs op: from the tape in replay, on the database otherwise (recorded when live).
func (t *tapeDB) do(op string, real func() (any, error)) (any, error) {
	if t.mode == replay {
		return t.next(op)
	}
	v, err := real()
	if t.mode == live {
		t.rec = append(t.rec, call{op: op, val: v, err: err})
	}
	if writes(op) {
		t.changed()
	}
	return v, err
}

// read runs a whole-database read, answered from reads when the database has not changed
// since it was last asked.
func (t *tapeDB) read(op string, real func() (any, error)) (any, error) {
	if t.mode == replay {
		return t.next(op)
	}
	if v, ok := t.reads[op]; ok {
		if t.mode == live {
			t.rec = append(t.rec, call{op: op, val: v})
		}
		return v, nil
	}
	v, err := t.do(op, real)
	if err == nil {
		if t.reads == nil {
			t.reads = map[string]any{}
		}
		t.reads[op] = v
	}
	return v, err
}

// changed forgets the reads: the database has changed (a write, or a restore).
func (t *tapeDB) changed() { clear(t.reads) }

// writes reports whether a call can change the database.
func writes(op string) bool {
	switch op {
	case "claim", "claim-due", "take", "renew", "finalize", "fail", "rescue", "create":
		return true
	}
	return false
}

// close closes every real connection the tape holds.
func (t *tapeDB) close() error {
	t.begin(direct, nil)
	var errs []error
	for _, c := range t.free {
		errs = append(errs, c.Close())
	}
	t.free = nil
	return errors.Join(errs...)
}

// Connect hands out a connection whose real one is taken from the pool when it is first used
// live. A crash's Close gives the real one back: between two actions a SQLite connection holds
// no transaction, so a crashed worker's rows are left exactly as a closed connection leaves
// them.
func (t *tapeDB) Connect(ctx context.Context) (engine.Conn, error) {
	_, err := t.do("connect", func() (any, error) { return nil, nil })
	if err != nil {
		return nil, err
	}
	c := &tapeConn{db: t}
	t.open = append(t.open, c)
	return c, nil
}

func (t *tapeDB) CreatePayment(ctx context.Context, p engine.NewPayment) error {
	_, err := t.do("create", func() (any, error) { return nil, t.real.CreatePayment(ctx, p) })
	return err
}

func (t *tapeDB) Snapshot(ctx context.Context) ([]engine.Row, error) {
	v, err := t.read("snapshot", func() (any, error) { return t.real.Snapshot(ctx) })
	rows, _ := v.([]engine.Row)
	return rows, err
}

func (t *tapeDB) EachRow(ctx context.Context, fn func(engine.Row) error) error {
	v, err := t.read("rows", func() (any, error) { return t.real.Snapshot(ctx) })
	if err != nil {
		return err
	}
	rows, _ := v.([]engine.Row)
	for _, r := range rows {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// txID is one payment's transaction id, as EachTransactionID hands them out.
type txID struct{ key, id string }

func (t *tapeDB) EachTransactionID(ctx context.Context, fn func(key, id string) error) error {
	v, err := t.read("txids", func() (any, error) {
		var ids []txID
		err := t.real.EachTransactionID(ctx, func(k, id string) error { ids = append(ids, txID{k, id}); return nil })
		return ids, err
	})
	if err != nil {
		return err
	}
	ids, _ := v.([]txID)
	for _, x := range ids {
		if err := fn(x.key, x.id); err != nil {
			return err
		}
	}
	return nil
}

func (t *tapeDB) Counts(ctx context.Context) (engine.Counts, error) {
	v, err := t.read("counts", func() (any, error) { return t.real.Counts(ctx) })
	c, _ := v.(engine.Counts)
	return c, err
}

func (t *tapeDB) Path() string { return t.real.Path() }

// Capabilities: the tape records whole actions of the lease protocol and the rescuer's, no more
// (no lock step, no batches, no trace, no retry reads or redrive).
func (t *tapeDB) Capabilities() engine.Capabilities {
	return engine.Capabilities{Rescue: t.real.Capabilities().Rescue}
}

// tapeConn is a worker's (or the rescuer's) connection on the tape.
type tapeConn struct {
	db     *tapeDB
	real   engine.Conn
	closed bool
}

var (
	_ engine.Conn       = (*tapeConn)(nil)
	_ engine.RescueConn = (*tapeConn)(nil)
)

// conn is the real connection, taken from the pool (or opened) at its first live use.
func (c *tapeConn) conn(ctx context.Context) (engine.Conn, error) {
	if c.closed {
		return nil, errors.New("explore: a closed connection was used")
	}
	if c.real == nil {
		if n := len(c.db.free); n > 0 {
			c.real, c.db.free = c.db.free[n-1], c.db.free[:n-1]
		} else {
			r, err := c.db.real.Connect(ctx)
			if err != nil {
				return nil, err
			}
			c.real = r
		}
	}
	return c.real, nil
}

// release gives the real connection back to the pool.
func (c *tapeConn) release() {
	if c.real != nil {
		c.db.free = append(c.db.free, c.real)
		c.real = nil
	}
}

// on runs op on the real connection (live or direct) or from the tape (replay).
func on[T any](ctx context.Context, c *tapeConn, op string, fn func(engine.Conn) (T, error)) (T, error) {
	v, err := c.db.do(op, func() (any, error) {
		r, err := c.conn(ctx)
		if err != nil {
			return nil, err
		}
		return fn(r)
	})
	out, _ := v.(T)
	return out, err
}

func (c *tapeConn) LoadPending(ctx context.Context) ([]engine.Message, error) {
	return on(ctx, c, "load", func(r engine.Conn) ([]engine.Message, error) { return r.LoadPending(ctx) })
}

func (c *tapeConn) Claim(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	return on(ctx, c, "claim", func(r engine.Conn) (engine.ClaimResult, error) { return r.Claim(ctx, req) })
}

func (c *tapeConn) ClaimDue(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	return on(ctx, c, "claim-due", func(r engine.Conn) (engine.ClaimResult, error) { return r.ClaimDue(ctx, req) })
}

// selected is SelectCandidate's two answers.
type selected struct {
	m  engine.Message
	ok bool
}

func (c *tapeConn) SelectCandidate(ctx context.Context, now time.Time) (engine.Message, bool, error) {
	s, err := on(ctx, c, "select", func(r engine.Conn) (selected, error) {
		m, ok, err := r.SelectCandidate(ctx, now)
		return selected{m, ok}, err
	})
	return s.m, s.ok, err
}

func (c *tapeConn) TakeUnconditional(ctx context.Context, req engine.TakeRequest) (engine.TakeResult, error) {
	return on(ctx, c, "take", func(r engine.Conn) (engine.TakeResult, error) { return r.TakeUnconditional(ctx, req) })
}

func (c *tapeConn) Renew(ctx context.Context, req engine.RenewRequest) (engine.RenewResult, error) {
	return on(ctx, c, "renew", func(r engine.Conn) (engine.RenewResult, error) { return r.Renew(ctx, req) })
}

func (c *tapeConn) Finalize(ctx context.Context, req engine.FinalizeRequest) (engine.FinalizeResult, error) {
	return on(ctx, c, "finalize", func(r engine.Conn) (engine.FinalizeResult, error) { return r.Finalize(ctx, req) })
}

func (c *tapeConn) Fail(ctx context.Context, req engine.FailRequest) (engine.FailResult, error) {
	return on(ctx, c, "fail", func(r engine.Conn) (engine.FailResult, error) { return r.Fail(ctx, req) })
}

func (c *tapeConn) Expired(ctx context.Context, now time.Time) ([]engine.Expired, error) {
	return on(ctx, c, "expired", func(r engine.Conn) ([]engine.Expired, error) {
		return r.(engine.RescueConn).Expired(ctx, now) // Capabilities says Rescue only when the real one can
	})
}

func (c *tapeConn) Rescue(ctx context.Context, req engine.RescueRequest) (engine.RescueResult, error) {
	return on(ctx, c, "rescue", func(r engine.Conn) (engine.RescueResult, error) {
		return r.(engine.RescueConn).Rescue(ctx, req) // Capabilities says Rescue only when the real one can
	})
}

// Close gives the real connection back to the pool (see Connect).
func (c *tapeConn) Close() error {
	if c.db.mode == replay {
		c.closed = true
		return nil
	}
	c.release()
	c.closed = true
	return nil
}
