package store

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"
)

// Conn is one worker's own connection (a separate *sql.DB holding exactly one SQLite
// connection), as a separate application instance would have. It implements engine.Conn; every
// method is one transaction.
//
// Its methods add no deadline of their own: the only wait in a worker's transaction is for the
// write lock (BEGIN IMMEDIATE, or the FairWriteLock queue), which busy_timeout (BusyTimeout)
// bounds and the caller's ctx cancels. A timer per call would cost every transaction a
// goroutine in database/sql and one in the driver, a tenth of a claim + finalize on one worker.
type Conn struct {
	pool *sql.DB              // a pool of exactly one connection: conn
	conn *sql.Conn            // that connection, taken from the pool for good by prepare
	gate *writeGate           // the DB's write-lock queue (Options.FairWriteLock), or nil
	hold *shared.FinalizeHold // the DB's fault injection (HoldFinalize), or nil
	// begin, commit and rollback are the transaction's own statements, and stmts the claim's
	// and the finalize's; all prepared once on conn by prepare and read-only afterwards.
	begin, commit, rollback *sql.Stmt
	stmts                   map[string]*sql.Stmt
	// broken is set when a failed transaction could not be rolled back: the SQLite connection
	// was then closed, and every later call returns broken.
	broken error
	// trace, when set (SetTrace), receives every statement run and each transaction's end.
	trace *engine.Trace
}

var _ engine.Conn = (*Conn)(nil)

// Connect opens a new connection for one worker.
func (db *DB) Connect(ctx context.Context) (engine.Conn, error) {
	c, err := openPool(db.path, true, 1)
	if err != nil {
		return nil, &EnvError{Path: db.path, Err: err}
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	if err := c.PingContext(ctx); err != nil {
		c.Close()
		return nil, &EnvError{Path: db.path, Err: describe(err)}
	}
	conn := &Conn{pool: c, gate: db.gate, hold: db.hold, stmts: map[string]*sql.Stmt{}}
	if err := conn.prepare(ctx); err != nil {
		conn.Close()
		return nil, &EnvError{Path: db.path, Err: err}
	}
	return conn, nil
}

// hotSQL is every statement of Claim, Finalize and the batch and fused methods. Preparing them
// once per connection saves SQLite's parser a quarter of the time of a claim + finalize.
func hotSQL() []string {
	return []string{ClaimReadSQL, ClaimExpiredSQL, keyedCandidateSQL, claimUpdateSQL, blockerSQL, dueBlockerSQL,
		finalizeReadSQL, finalizePaymentSQL,
		finalizeOutboxSQL(false, false), finalizeOutboxSQL(true, false),
		finalizeOutboxSQL(false, true), finalizeOutboxSQL(true, true),
		ClaimBatchSQL, savepointSQL, rollbackToSQL, releaseSQL}
}

// prepare takes the pool's one connection for good (c.conn) and prepares on it the transaction's
// statements and hotSQL.
func (c *Conn) prepare(ctx context.Context) error {
	var err error
	if c.conn, err = c.pool.Conn(ctx); err != nil {
		return describe(err)
	}
	for _, q := range append([]string{beginSQL, commitSQL, rollbackSQL}, hotSQL()...) {
		st, err := c.conn.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare: %w", describe(err))
		}
		c.stmts[q] = st
	}
	c.begin, c.commit, c.rollback = c.stmts[beginSQL], c.stmts[commitSQL], c.stmts[rollbackSQL]
	return nil
}

// The statements of a transaction, as the lesson writes them.
const (
	beginSQL    = `BEGIN IMMEDIATE`
	commitSQL   = `COMMIT`
	rollbackSQL = `ROLLBACK`
)

// txn is a worker's open transaction. inTx makes one between its BEGIN IMMEDIATE and its COMMIT
// or ROLLBACK; the connection is the worker's alone, so every statement run on it meanwhile is
// part of the transaction.
type txn struct {
	ctx context.Context
	c   *Conn
}

// queryRow, query and exec run query in the transaction, through the statement prepared on the
// connection when query is hot.
//
// The statement runs under context.WithoutCancel(ctx): a cancelled ctx stops the wait for the
// write lock (BEGIN IMMEDIATE), but once the transaction has begun it runs to its COMMIT or
// ROLLBACK. A statement inside a write transaction in WAL mode waits for no one (the lock is
// already ours), and a ctx that can be cancelled costs the driver a watcher goroutine per
// statement (a small prepared statement takes about a third longer).
//
// With a trace set (SetTrace) each is recorded as it ran; without, the cost is one nil check.
func (t txn) queryRow(query string, args ...any) row {
	var r *sql.Row
	if st, ok := t.c.stmts[query]; ok {
		r = st.QueryRowContext(context.WithoutCancel(t.ctx), args...)
	} else {
		r = t.c.conn.QueryRowContext(context.WithoutCancel(t.ctx), query, args...)
	}
	if t.c.trace == nil {
		return row{r: r}
	}
	return row{r: r, tr: t.c.trace, i: t.c.record(query, args)}
}

func (t txn) query(query string, args ...any) (*sql.Rows, error) {
	if t.c.trace != nil {
		t.c.record(query, args) // rows returned: not counted (RowsUnknown)
	}
	if st, ok := t.c.stmts[query]; ok {
		return st.QueryContext(context.WithoutCancel(t.ctx), args...)
	}
	return t.c.conn.QueryContext(context.WithoutCancel(t.ctx), query, args...)
}

func (t txn) exec(query string, args ...any) (r sql.Result, err error) {
	if st, ok := t.c.stmts[query]; ok {
		r, err = st.ExecContext(context.WithoutCancel(t.ctx), args...)
	} else {
		r, err = t.c.conn.ExecContext(context.WithoutCancel(t.ctx), query, args...)
	}
	if t.c.trace != nil {
		t.c.recordResult(t.c.record(query, args), r, err)
	}
	return r, err
}

// inTx runs fn in one transaction on the worker's connection, after its turn in the write-lock
// queue when the DB has one (Options.FairWriteLock): BEGIN IMMEDIATE, which takes SQLite's write
// lock up front (waiting for it up to busy_timeout, or until ctx ends), then fn, then COMMIT, or
// ROLLBACK if fn or the COMMIT fails.
//
// The transaction is three prepared statements on the worker's own connection rather than a
// database/sql Tx: a Tx starts a goroutine to watch its context, and another for every query
// inside it, which on one worker cost a quarter of a claim + finalize (docs/benchmarks.md).
func (c *Conn) inTx(ctx context.Context, fn func(txn) error) error {
	if c.broken != nil {
		return c.broken
	}
	var gateWait time.Duration
	if c.gate != nil {
		var start time.Time
		if c.trace != nil {
			start = time.Now()
		}
		if err := c.gate.enter(ctx, c); err != nil {
			return err
		}
		defer c.gate.leave(c)
		if c.trace != nil {
			gateWait = time.Since(start)
		}
	}
	var err error
	if c.trace != nil {
		err = c.beginTraced(ctx, gateWait)
	} else {
		_, err = c.begin.ExecContext(ctx)
	}
	if err != nil {
		c.rollbackAfter(txn{ctx: ctx, c: c}) // in case SQLite began it after all
		return fmt.Errorf("begin immediate: %w", describe(err))
	}
	t := txn{ctx: ctx, c: c}
	if err := fn(t); err != nil {
		c.rollbackAfter(t)
		return err
	}
	if _, err := c.commit.ExecContext(context.WithoutCancel(ctx)); err != nil {
		c.rollbackAfter(t)
		return fmt.Errorf("commit: %w", describe(err))
	}
	if c.trace != nil {
		c.trace.End = engine.EndCommit
	}
	return nil
}

// inTxResult runs body in one transaction, as inTx does, and returns what body returned: on an
// error of body, its result too (a finalize whose guard changed no row says why).
func inTxResult[T any](c *Conn, ctx context.Context, body func(txn) (T, error)) (T, error) {
	var res T
	err := c.inTx(ctx, func(t txn) error {
		var err error
		res, err = body(t)
		return err
	})
	return res, err
}

// rollbackAfter ends a failed transaction. SQLite may have rolled it back already (after some
// errors it does). If the ROLLBACK fails for another reason, the SQLite connection itself is
// closed, which rolls the transaction back and frees the write lock for the other workers, and
// the Conn is marked broken: a worker that has lost its connection must be restarted with a new
// one (in the engine: a crash and a restart).
func (c *Conn) rollbackAfter(t txn) {
	if c.trace != nil && len(c.trace.Statements) > 0 {
		c.trace.End = engine.EndRollback
	}
	_, err := c.rollback.ExecContext(context.WithoutCancel(t.ctx))
	if err == nil || strings.Contains(err.Error(), "no transaction is active") {
		return
	}
	c.broken = fmt.Errorf("connection closed after a failed rollback: %w", describe(err))
	c.closeConn(true)
}

// closeConn finalizes the connection's prepared statements, then closes the SQLite connection, in
// that order: SQLite keeps a connection, and any transaction it has open, until its last
// statement is finalized. With discard, the connection is closed even though it looks usable;
// otherwise database/sql would hand it back to the pool as it is.
func (c *Conn) closeConn(discard bool) {
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
	if c.conn == nil {
		return
	}
	if discard {
		c.conn.Raw(func(any) error { return driver.ErrBadConn }) // database/sql closes a bad conn
	}
	c.conn.Close()
	c.conn = nil
}

// Close closes the worker's connection. An open transaction (there is none between calls) would
// be rolled back by SQLite.
func (c *Conn) Close() error {
	c.closeConn(false)
	return c.pool.Close()
}

// The claimable condition: the lesson's "Status='Pending' OR (Status='Processing' AND
// LockedUntilUtc < now)", with ProcessedAtUtc IS NULL in front (a finished row is never
// claimable; schema.sql's CHECK ties the two). A lease is live up to and including
// LockedUntilUtc; it is expired once now is later. The claim's UPDATE repeats it, so a row is
// taken only if it is still claimable when it is written.
const claimable = `ProcessedAtUtc IS NULL AND (Status = 'Pending' OR (Status = 'Processing' AND LockedUntilUtc < :now))`

// The claim's read finds the oldest claimable rows (ORDER BY CreatedAtUtc, as the lesson writes
// it) without walking the live leases. Written as the lesson writes it, one SELECT with the OR,
// SQLite walks every unfinished row older than the first claimable one: in a run with many
// crashes and a clock that does not move, thousands of live leases, read again on every claim
// (a 20,000-message run took 18 minutes). Split along the OR, each part is an index's first
// entries (schema.sql):
//
//   - the oldest Pending rows that never failed, from OutboxMessages_Queue;
//   - the oldest Pending rows that failed, from OutboxMessages_Retried;
//   - the oldest rows whose lease ended at one instant, the next after :after, from
//     OutboxMessages_Queue (its leases, ordered by LockedUntilUtc, then CreatedAtUtc).
//
// ClaimReadSQL reads all three, with the first instant at which leases ended; only when leases
// ended does the claim read the next instant (ClaimExpiredSQL), until there is none: usually
// there is no such read, or one. The oldest of all these rows is the lesson's answer, row for row
// (ties by Id, as the indexes keep them). Both are exported for the EXPLAIN QUERY PLAN test and
// the docs.
const (
	ClaimReadSQL    = freshCandidatesSQL + retriedCandidatesSQL + expiredTailSQL
	ClaimExpiredSQL = expiredSQL
)

// waitEnd is OutboxMessages_Queue's second column, word for word, as every read of the index
// must name it: the instant an unfinished row waits for, the end of its lease (Processing) or of
// its backoff (Pending; none for a row that never failed).
const waitEnd = `coalesce(LockedUntilUtc, NextAttemptUtc)`

// The parts of the claims' reads.
const (
	// freshCandidatesSQL is the oldest Pending rows that never failed.
	freshCandidatesSQL = `SELECT * FROM (SELECT ` + candidateColumns + `
  FROM OutboxMessages
 WHERE ProcessedAtUtc IS NULL AND Status = 'Pending' AND ` + waitEnd + ` IS NULL
 ORDER BY CreatedAtUtc
 LIMIT :k)`
	// retriedCandidatesSQL adds the oldest Pending rows that failed, due or not.
	retriedCandidatesSQL = `
UNION ALL
SELECT * FROM (SELECT ` + candidateColumns + `
  FROM OutboxMessages
 WHERE Status = 'Pending' AND NextAttemptUtc IS NOT NULL
 ORDER BY CreatedAtUtc
 LIMIT :k)`
	// expiredTailSQL adds the oldest ended leases to a read of Pending rows.
	expiredTailSQL = `
UNION ALL
SELECT * FROM (` + expiredSQL + `)`
)

// candidateColumns are what the claim's reads return of each row (candidate).
const candidateColumns = `Id, IdempotencyKey, Type, Payload, LockedBy, LockedUntilUtc, LeaseVersion, CreatedAtUtc, Status`

// expiredSQL is the oldest rows whose lease ended at the first instant after :after.
const expiredSQL = `SELECT ` + candidateColumns + `
  FROM OutboxMessages
 WHERE ProcessedAtUtc IS NULL AND Status = 'Processing' AND ` + waitEnd + ` = (
       SELECT min(` + waitEnd + `) FROM OutboxMessages
        WHERE ProcessedAtUtc IS NULL AND Status = 'Processing'
          AND ` + waitEnd + ` > :after AND ` + waitEnd + ` < :now)
 ORDER BY CreatedAtUtc
 LIMIT :k`

// candidate is a claimable row as the claim's read found it.
type candidate struct {
	m            engine.Message
	owner, until sql.NullString
	seen         int64  // the lease version the read saw
	created      string // CreatedAtUtc
	status       string
}

// candidates returns up to k of the oldest claimable rows at now, oldest first: the claim's
// read (ClaimReadSQL, then ClaimExpiredSQL for each further instant at which leases ended),
// in the lesson's ORDER BY CreatedAtUtc, ties by Id.
func (t txn) candidates(now string, k int) ([]candidate, error) {
	return t.candidatesFrom(ClaimReadSQL, now, k)
}

// candidatesFrom is candidates with read (ClaimReadSQL, or ClaimDueReadSQL) as the first read.
func (t txn) candidatesFrom(read, now string, k int) ([]candidate, error) {
	out, err := t.readCandidates(read, sql.Named("k", k), sql.Named("after", ""), sql.Named("now", now))
	if err != nil {
		return nil, err
	}
	after := ""
	for _, c := range out {
		if c.status == engine.StatusProcessing {
			after = c.until.String
		}
	}
	for after != "" {
		ended, err := t.readCandidates(ClaimExpiredSQL, sql.Named("after", after), sql.Named("now", now), sql.Named("k", k))
		if err != nil {
			return nil, err
		}
		after = ""
		if len(ended) > 0 {
			after = ended[0].until.String
		}
		out = append(out, ended...)
	}
	slices.SortFunc(out, func(a, b candidate) int {
		if c := strings.Compare(a.created, b.created); c != 0 {
			return c
		}
		return cmp.Compare(a.m.ID, b.m.ID)
	})
	return out[:min(k, len(out))], nil
}

// readCandidates runs one of the claim's reads, and traces the rows it returned.
func (t txn) readCandidates(query string, args ...any) ([]candidate, error) {
	rows, err := t.query(query, args...)
	if err != nil {
		return nil, fmt.Errorf("claim read: %w", describe(err))
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.m.ID, &c.m.IdempotencyKey, &c.m.Type, &c.m.Payload, &c.owner, &c.until, &c.seen, &c.created, &c.status); err != nil {
			return nil, fmt.Errorf("claim read: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claim read: %w", describe(err))
	}
	if t.c.trace != nil {
		t.c.trace.Statements[len(t.c.trace.Statements)-1].Rows = int64(len(out))
	}
	return out, nil
}

// claimUpdateSQL takes the candidate: a compare-and-set on the lease version the read saw, and
// on the claimable condition.
const claimUpdateSQL = `UPDATE OutboxMessages
   SET Status = 'Processing', LockedBy = :worker, LockedUntilUtc = :until,
       Attempts = Attempts + 1, LeaseVersion = LeaseVersion + 1
 WHERE Id = :id AND LeaseVersion = :seen AND ` + claimable

// keyedCandidateSQL is a keyed claim's read: the named message, whatever its state.
const keyedCandidateSQL = `SELECT Id, IdempotencyKey, Type, Payload, LockedBy, LockedUntilUtc, LeaseVersion, Status
  FROM OutboxMessages WHERE IdempotencyKey = :key ORDER BY Id LIMIT 1`

// blockerSQL finds why nothing was claimable: the lease that ends first (the first lease in
// OutboxMessages_Queue). It runs only when the claim's read found nothing, so no row is Pending.
const blockerSQL = `SELECT IdempotencyKey, LockedBy, LockedUntilUtc
  FROM OutboxMessages
 WHERE ProcessedAtUtc IS NULL AND Status = 'Processing'
 ORDER BY ` + waitEnd + `, CreatedAtUtc
 LIMIT 1`

// LoadPending is the naive worker's read: every Pending row, with no claim at all.
func (c *Conn) LoadPending(ctx context.Context) ([]engine.Message, error) {
	if c.broken != nil {
		return nil, c.broken
	}
	rows, err := c.conn.QueryContext(ctx, loadPendingSQL)
	if err != nil {
		return nil, fmt.Errorf("load pending: %w", describe(err))
	}
	defer rows.Close()
	out, err := shared.All(rows, "load pending", describe, shared.ScanMessage)
	if err != nil {
		return nil, err
	}
	if c.trace != nil {
		c.trace.Statements[c.record(loadPendingSQL, nil)].Rows = int64(len(out))
	}
	return out, nil
}

// loadPendingSQL is the naive worker's read, in autocommit (no transaction).
const loadPendingSQL = `SELECT Id, IdempotencyKey, Type, Payload
  FROM OutboxMessages WHERE Status = 'Pending' ORDER BY CreatedAtUtc, Id`

// Claim is the atomic claim, as the lesson writes it: BEGIN IMMEDIATE takes the write lock up
// front, a read finds the candidate, and a conditional UPDATE takes it only if it is still
// claimable. With req.Key set it claims that message or reports why it cannot.
func (c *Conn) Claim(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	res, err := inTxResult(c, ctx, func(t txn) (engine.ClaimResult, error) { return c.claimTx(t, req) })
	if err != nil {
		return engine.ClaimResult{}, err
	}
	return res, nil
}

// claimTx is the body of Claim, run on tx (which must hold the write lock: BEGIN IMMEDIATE).
// It reads the request's times here, with the lock held (engine: "Time in a request"), so that a
// wall-clock worker that waited for the lock is granted a lease that starts when it got it.
func (c *Conn) claimTx(t txn, req engine.ClaimRequest) (engine.ClaimResult, error) {
	return c.claimWith(t, req, false)
}

// claimWith is claimTx; with due, ClaimDue's: a Pending row is a candidate only from its
// NextAttemptUtc on (ClaimDueReadSQL, claimDueUpdateSQL), and a claim that finds none says
// which lease or backoff ends first (whyNothingDue). A due claim is never keyed.
func (c *Conn) claimWith(t txn, req engine.ClaimRequest, due bool) (engine.ClaimResult, error) {
	var (
		res            engine.ClaimResult
		m              engine.Message
		owner, until   sql.NullString
		status         string
		seen           int64 // the lease version the read saw
		err            error
		candidateFound bool
	)
	nowT, untilT := req.Times()
	res.At = nowT
	now := FormatTime(nowT)
	if req.Key == "" {
		var found []candidate
		read := ClaimReadSQL
		if due {
			read = ClaimDueReadSQL
		}
		if found, err = t.candidatesFrom(read, now, 1); err != nil {
			return res, err
		}
		if candidateFound = len(found) == 1; candidateFound {
			c := found[0]
			m, owner, until, seen = c.m, c.owner, c.until, c.seen
		}
	} else {
		err = t.queryRow(keyedCandidateSQL, sql.Named("key", req.Key)).
			Scan(&m.ID, &m.IdempotencyKey, &m.Type, &m.Payload, &owner, &until, &seen, &status)
		if errors.Is(err, sql.ErrNoRows) {
			return res, fmt.Errorf("claim %s: no such message", req.Key)
		}
		if err != nil {
			return res, fmt.Errorf("claim: %w", describe(err))
		}
		candidateFound = status == engine.StatusPending ||
			(status == engine.StatusProcessing && until.Valid && until.String < now)
	}
	if !candidateFound && due {
		err := whyNothingDue(t, &res)
		return res, err
	}
	if !candidateFound {
		err := c.whyNothing(t, req.Key, status, owner, until, &res)
		return res, err
	}
	update := claimUpdateSQL
	if due {
		update = claimDueUpdateSQL
	}
	r, err := t.exec(update,
		sql.Named("worker", req.Worker), sql.Named("until", FormatTime(untilT)),
		sql.Named("id", m.ID), sql.Named("seen", seen), sql.Named("now", now))
	if err != nil {
		return res, fmt.Errorf("claim update: %w", describe(err))
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		// A lost race (engine.Conn): BEGIN IMMEDIATE excludes it here, but if it happened it
		// would be reported as lost, as the contract says, never trusted as won.
		res.Outcome, res.Blocker = engine.ClaimLost, m.IdempotencyKey
		return res, err
	}
	m.LeaseVersion = seen + 1
	m.LockedUntil = untilT.UTC()
	res = engine.ClaimResult{Outcome: engine.ClaimWon, Message: m, At: nowT, PrevOwner: owner.String}
	if until.Valid {
		res.PrevUntil, _ = ParseTime(until.String)
	}
	return res, nil
}

// whyNothing fills res for a claim that found no candidate: Empty when no work is left (for a
// keyed claim: the message is already Processed), Blocked when a live lease holds it.
func (c *Conn) whyNothing(t txn, key, status string, owner, until sql.NullString, res *engine.ClaimResult) error {
	if key != "" {
		if status == engine.StatusProcessed {
			res.Outcome = engine.ClaimEmpty
			return nil
		}
		res.Outcome, res.Blocker, res.PrevOwner = engine.ClaimBlocked, key, owner.String
		res.PrevUntil, _ = ParseTime(until.String)
		return nil
	}
	var bkey string
	err := t.queryRow(blockerSQL).Scan(&bkey, &owner, &until)
	if errors.Is(err, sql.ErrNoRows) {
		res.Outcome = engine.ClaimEmpty
		return nil
	}
	if err != nil {
		return fmt.Errorf("claim blocker: %w", describe(err))
	}
	res.Outcome, res.Blocker, res.PrevOwner = engine.ClaimBlocked, bkey, owner.String
	res.PrevUntil, _ = ParseTime(until.String)
	return nil
}

// SelectCandidate is the first half of the non-atomic claim: a plain read, its own transaction.
func (c *Conn) SelectCandidate(ctx context.Context, now time.Time) (engine.Message, bool, error) {
	if c.broken != nil {
		return engine.Message{}, false, c.broken
	}
	// Its reads run one by one, outside any transaction: the non-atomic claim is the one whose
	// read and take come apart.
	found, err := txn{ctx: ctx, c: c}.candidates(FormatTime(now), 1)
	if err != nil {
		return engine.Message{}, false, fmt.Errorf("select candidate: %w", err)
	}
	if len(found) == 0 {
		return engine.Message{}, false, nil
	}
	return found[0].m, true, nil
}

// TakeUnconditional is the second half of the non-atomic claim: it sets the lease on the row it
// read earlier without checking that the row is still claimable. This is the bug it teaches: if
// another worker finalized the row meanwhile, the take makes it unfinished again (ProcessedAtUtc
// NULL, as the schema's CHECK requires of a row in Processing) and it is processed twice.
func (c *Conn) TakeUnconditional(ctx context.Context, req engine.TakeRequest) (engine.TakeResult, error) {
	var res engine.TakeResult
	m, id := &res.Message, req.ID
	err := c.inTx(ctx, func(t txn) error {
		var until time.Time
		res.At, until = req.Times() // with the write lock held
		m.LockedUntil = until.UTC()
		err := t.queryRow(takeSQL,
			sql.Named("worker", req.Worker), sql.Named("until", FormatTime(until)), sql.Named("id", id)).
			Scan(&m.ID, &m.IdempotencyKey, &m.Type, &m.Payload, &m.LeaseVersion)
		if err != nil {
			return fmt.Errorf("take message %d: %w", id, describe(err))
		}
		return nil
	})
	return res, err
}

// takeSQL is the non-atomic claim's second half: no condition but the Id.
const takeSQL = `UPDATE OutboxMessages
   SET Status = 'Processing', LockedBy = :worker, LockedUntilUtc = :until, ProcessedAtUtc = NULL,
       Attempts = Attempts + 1, LeaseVersion = LeaseVersion + 1
 WHERE Id = :id
RETURNING Id, IdempotencyKey, Type, Payload, LeaseVersion`

// renewSQL is the heartbeat: a compare-and-set on owner and lease version.
const renewSQL = `UPDATE OutboxMessages SET LockedUntilUtc = :until
 WHERE Id = :id AND Status = 'Processing' AND LockedBy = :worker AND LeaseVersion = :version`

// Renew extends a lease that the worker still holds, under the same version (a heartbeat).
func (c *Conn) Renew(ctx context.Context, req engine.RenewRequest) (engine.RenewResult, error) {
	var (
		n   int64
		res engine.RenewResult
	)
	msg, worker := req.Message, req.Worker
	err := c.inTx(ctx, func(t txn) error {
		var until time.Time
		res.At, until = req.Times() // with the write lock held
		res.Until = until.UTC()
		r, err := t.exec(renewSQL,
			sql.Named("until", FormatTime(until)), sql.Named("id", msg.ID),
			sql.Named("worker", worker), sql.Named("version", msg.LeaseVersion))
		if err != nil {
			return fmt.Errorf("renew %s: %w", msg.IdempotencyKey, describe(err))
		}
		n, err = r.RowsAffected()
		return err
	})
	res.Renewed = n == 1 && err == nil
	return res, err
}

// finalizeReadSQL reads the row as it is just before the finalize writes it.
const finalizeReadSQL = `SELECT Status, LockedBy, LeaseVersion
  FROM OutboxMessages WHERE Id = :id`

const finalizePaymentSQL = `UPDATE Payments SET PaymentStatus = :status, TransactionId = :txid
 WHERE IdempotencyKey = :key`

// finalizeOutboxSQL is the finalize's outbox UPDATE, as the lesson writes it, guarded by the
// ownership check and by the fencing token when asked. With the ownership check alone it returns
// the row's LeaseVersion (which the finalize does not change), so that the ledger knows the
// version it wrote over without a read of its own; with fencing too, the WHERE names that version
// and the rows affected say all (a RETURNING makes SQLite keep the returned rows in a table of
// their own until the statement ends).
func finalizeOutboxSQL(ownershipCheck, fencing bool) string {
	q := `UPDATE OutboxMessages
   SET Status = 'Processed', ProcessedAtUtc = :now, LockedUntilUtc = NULL
 WHERE Id = :id`
	if ownershipCheck {
		q += ` AND Status = 'Processing' AND LockedBy = :worker`
	}
	if fencing {
		q += ` AND LeaseVersion = :version`
	}
	if ownershipCheck && !fencing {
		q += `
RETURNING LeaseVersion`
	}
	return q
}

// Finalize writes the provider's outcome to the payment and marks the message Processed, in one
// transaction. With req.OwnershipCheck the outbox UPDATE also requires Status='Processing' AND
// LockedBy=worker (and, with req.Fencing, the worker's lease version); unless it changes exactly
// one row the whole transaction rolls back, the payment update with it.
func (c *Conn) Finalize(ctx context.Context, req engine.FinalizeRequest) (engine.FinalizeResult, error) {
	return shared.Finalized(inTxResult(c, ctx, func(t txn) (engine.FinalizeResult, error) { return c.finalizeTx(t, req) }))
}

// finalizeTx is the body of Finalize, run on tx. It returns shared.ErrRolledBack (with res filled) when
// the guarded UPDATE changed no row: the caller must then roll the transaction back.
//
// The ledger needs the row as it was just before the write. Without a guard it is read first.
// With one, the UPDATE's own WHERE proves it (Processing, owned by req.Worker) and its RETURNING
// gives the version; the row is read only when the guard fails, to say why.
func (c *Conn) finalizeTx(t txn, req engine.FinalizeRequest) (engine.FinalizeResult, error) {
	res := engine.FinalizeResult{At: req.Time()} // with the write lock held
	key := req.Message.IdempotencyKey
	if !req.OwnershipCheck {
		if err := c.readPrior(t, req.Message, &res); err != nil {
			return res, err
		}
	}
	var txID any
	if req.TransactionID != "" {
		txID = req.TransactionID
	}
	if _, err := t.exec(finalizePaymentSQL, sql.Named("status", req.PaymentStatus), sql.Named("txid", txID),
		sql.Named("key", key)); err != nil {
		return res, fmt.Errorf("finalize %s: update payment: %w", key, describe(err))
	}
	if err := c.hold.Wait(t.ctx, key); err != nil {
		return res, fmt.Errorf("finalize %s: held: %w", key, err) // rolled back
	}
	args := []any{sql.Named("now", FormatTime(res.At)), sql.Named("id", req.Message.ID),
		sql.Named("worker", req.Worker), sql.Named("version", req.Message.LeaseVersion)}
	update := finalizeOutboxSQL(req.OwnershipCheck, req.Fencing)
	if !req.OwnershipCheck || req.Fencing {
		r, err := t.exec(update, args...)
		if err == nil {
			res.RowsAffected, err = r.RowsAffected()
		}
		if err != nil {
			return res, fmt.Errorf("finalize %s: update outbox: %w", key, describe(err))
		}
		switch {
		case res.RowsAffected == 1 && req.OwnershipCheck:
			// The guard held: the row was Processing, this worker's, at this lease version.
			res.PriorStatus, res.PriorOwner, res.PriorVersion = engine.StatusProcessing, req.Worker, req.Message.LeaseVersion
			return res, nil
		case res.RowsAffected == 1:
			return res, nil
		case req.OwnershipCheck:
			// The guard failed: not (or no longer) this worker's message. Say why, then roll back.
			if err := c.readPrior(t, req.Message, &res); err != nil {
				return res, err
			}
		}
		return res, shared.ErrRolledBack // the row is gone, or no longer this worker's lease
	}
	err := t.queryRow(update, args...).Scan(&res.PriorVersion)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// The guard failed: not (or no longer) this worker's message. Say why, then roll back.
		if err := c.readPrior(t, req.Message, &res); err != nil {
			return res, err
		}
		return res, shared.ErrRolledBack
	case err != nil:
		return res, fmt.Errorf("finalize %s: update outbox: %w", key, describe(err))
	}
	res.RowsAffected, res.PriorStatus, res.PriorOwner = 1, engine.StatusProcessing, req.Worker
	return res, nil
}

// readPrior reads m's row, as it is now inside tx, into res's Prior fields.
func (c *Conn) readPrior(t txn, m engine.Message, res *engine.FinalizeResult) error {
	var owner sql.NullString
	err := t.queryRow(finalizeReadSQL, sql.Named("id", m.ID)).Scan(&res.PriorStatus, &owner, &res.PriorVersion)
	if err != nil {
		return fmt.Errorf("finalize %s: read row: %w", m.IdempotencyKey, describe(err))
	}
	res.PriorOwner = owner.String
	return nil
}

// dueSQL is when a Pending row may be claimed: never failed, or its backoff is over.
const dueSQL = `(NextAttemptUtc IS NULL OR NextAttemptUtc <= :now)`

// ClaimDueReadSQL is ClaimReadSQL for ClaimDue: the oldest Pending rows that never failed
// (OutboxMessages_Queue, in claim order), the oldest of those whose backoff is over
// (OutboxMessages_Queue's Pending rows that failed, the range up to :now, sorted), and the oldest
// ended leases. It never walks the rows still in their backoff (the plan test pins it; schema
// 4's read searched its index of Pending rows with the backoff as a filter, and passed over
// every one of them).
const ClaimDueReadSQL = freshCandidatesSQL + `
UNION ALL
SELECT * FROM (SELECT * FROM (SELECT ` + candidateColumns + `
  FROM OutboxMessages
 WHERE ProcessedAtUtc IS NULL AND Status = 'Pending'
   AND ` + waitEnd + ` IS NOT NULL AND ` + waitEnd + ` <= :now
 ORDER BY ` + waitEnd + `, CreatedAtUtc
 LIMIT ` + dueScan + `)
 ORDER BY CreatedAtUtc
 LIMIT :k)` + expiredTailSQL

// dueScan bounds a due claim's read of the rows whose backoff is over: it reads the dueScan
// whose backoff ended first (OutboxMessages_Queue, in order) and takes the oldest of them. All
// of them, and so the oldest of all, unless more than dueScan are due at once: reading every
// due row to sort them made a claim cost the backlog of failed rows, which a worker whose clock
// runs ahead sees due all at once (skew: B +1h, fail-rate 0.3, backoff on: 100,000 messages did
// not finish in 590 s).
const dueScan = "64"

// claimDueUpdateSQL is claimUpdateSQL for ClaimDue: the row is still claimable and due.
const claimDueUpdateSQL = claimUpdateSQL + ` AND ` + dueSQL

// dueBlockerSQL says why a due claim found nothing: the row whose lease or backoff ends first.
// It runs only then, so every Pending row is in its backoff (a fresh one would have been
// claimed): the first backoff to end is the first entry of OutboxMessages_Queue's Pending rows,
// the first lease the first of its leases, and the earlier of the two is the blocker. Two index reads of one
// entry each: one read of every unfinished row, sorted on an expression no index holds, made
// each empty claim cost the backlog (a run of 4,000 messages with skew and backoff spent a
// third of its time here, and 100,000 did not finish in 590 s).
const dueBlockerSQL = `SELECT IdempotencyKey, Owner, Until FROM (
SELECT * FROM (SELECT IdempotencyKey, NULL AS Owner, NextAttemptUtc AS Until, CreatedAtUtc
  FROM OutboxMessages
 WHERE ProcessedAtUtc IS NULL AND Status = 'Pending' AND ` + waitEnd + ` IS NOT NULL
 ORDER BY ` + waitEnd + `, CreatedAtUtc
 LIMIT 1)
UNION ALL
SELECT * FROM (SELECT IdempotencyKey, LockedBy, LockedUntilUtc, CreatedAtUtc
  FROM OutboxMessages
 WHERE ProcessedAtUtc IS NULL AND Status = 'Processing'
 ORDER BY ` + waitEnd + `, CreatedAtUtc
 LIMIT 1))
 ORDER BY Until, CreatedAtUtc
 LIMIT 1`

// whyNothingDue fills res for a due claim at now that found no candidate: Blocked by the lease
// or the backoff that ends first (a backoff has no owner), or Empty.
func whyNothingDue(t txn, res *engine.ClaimResult) error {
	var owner, until sql.NullString
	err := t.queryRow(dueBlockerSQL).Scan(&res.Blocker, &owner, &until)
	if errors.Is(err, sql.ErrNoRows) {
		res.Outcome = engine.ClaimEmpty
		return nil
	}
	if err != nil {
		return fmt.Errorf("claim blocker: %w", describe(err))
	}
	res.Outcome, res.PrevOwner = engine.ClaimBlocked, owner.String
	res.PrevUntil, _ = ParseTime(until.String)
	return nil
}

// ClaimDue is the claim that honours NextAttemptUtc (retry.Conn): Claim's transaction and
// update, with ClaimDueReadSQL as its read.
func (c *Conn) ClaimDue(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	if req.Key != "" {
		return engine.ClaimResult{}, fmt.Errorf("claim due %s: a due claim is never keyed", req.Key)
	}
	res, err := inTxResult(c, ctx, func(t txn) (engine.ClaimResult, error) { return c.claimWith(t, req, true) })
	if err != nil {
		return engine.ClaimResult{}, err
	}
	return res, nil
}
