package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"

	"github.com/jackc/pgx/v5"
)

// Conn is one worker's own server connection, as a separate application instance would have.
// It implements engine.Conn; every method is one transaction (a single statement is one).
//
// PostgreSQL runs them under READ COMMITTED with row locks, not one write lock: two workers'
// transactions run at the same time, and a compare-and-set that finds its row changed by a
// transaction that committed meanwhile changes nothing. The claim does not wait for such rows:
// FOR UPDATE SKIP LOCKED passes over a row another transaction holds and takes the next one.
type Conn struct {
	conn *pgx.Conn
	hold *shared.FinalizeHold
	name string // the database, for errors
	// named is the application_name this connection has set (nameSelf), "" before.
	named string
	// open is a two-step claim between its steps (LockClaim, FinishClaim), nil otherwise.
	open *openClaim
	// tracer records the statements while the engine traces (SetTrace).
	tracer *tracer
}

var _ engine.Conn = (*Conn)(nil)

// Connect opens a new connection for one worker.
func (db *DB) Connect(ctx context.Context) (engine.Conn, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	cfg := db.t.config.ConnConfig.Copy()
	tr := &tracer{cur: -1}
	cfg.Tracer = tr
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, envError(db.t, err)
	}
	return &Conn{conn: c, hold: db.hold, name: db.t.shown, tracer: tr}, nil
}

// Close closes the worker's connection; the server rolls back a transaction left open.
func (c *Conn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.conn.Close(ctx)
}

// inTx runs fn in one transaction on the worker's connection: BEGIN, fn, then COMMIT, or
// ROLLBACK when fn fails. Once begun, the transaction runs to its end whatever ctx does (as on
// SQLite): a cancelled statement would cost the connection, and the server would roll back
// anyway. Only the finalize's hold (fault injection) listens to ctx.
func (c *Conn) inTx(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	run := context.WithoutCancel(ctx)
	tx, err := c.conn.Begin(run)
	if err != nil {
		return fmt.Errorf("begin: %w", describe(err))
	}
	if err := fn(ctx, tx); err != nil {
		tx.Rollback(run)
		return err
	}
	if err := tx.Commit(run); err != nil {
		return fmt.Errorf("commit: %w", describe(err))
	}
	return nil
}

// claimable is the lesson's condition, prefixed with the claim index's own (an unfinished row).
// A lease is live up to and including LockedUntilUtc; it is expired once now is later.
const claimable = `ProcessedAtUtc IS NULL AND (Status = 'Pending' OR (Status = 'Processing' AND LockedUntilUtc < $1))`

// ClaimSQL is the claim, the PostgreSQL way, in one statement (one transaction): the CTE picks
// the oldest claimable row and locks it, passing over rows other transactions hold (FOR UPDATE
// SKIP LOCKED); the UPDATE takes it under the lesson's conditions and returns it with the lease
// it replaced. $1 is now, $2 the worker, $3 the lease end. Exported for the plan test.
//
// MATERIALIZED is essential: as a subquery in FROM (or an inlined CTE) the pick is run again
// for every row the UPDATE visits, and one claim takes every claimable row.
const ClaimSQL = claimPickSQL + claimTakeSQL + claimReturningSQL

// ClaimSQL's three parts: its pick's condition ends claimPickSQL, its UPDATE's condition ends
// claimTakeSQL; ClaimDueSQL extends both.
const (
	claimPickSQL = `WITH c AS MATERIALIZED (
  SELECT Id, LockedBy, LockedUntilUtc FROM OutboxMessages
   WHERE ` + claimable
	claimTakeSQL = `
   ORDER BY CreatedAtUtc, Id
   LIMIT 1
     FOR UPDATE SKIP LOCKED)
UPDATE OutboxMessages o
   SET Status = 'Processing', LockedBy = $2, LockedUntilUtc = $3,
       Attempts = o.Attempts + 1, LeaseVersion = o.LeaseVersion + 1
  FROM c
 WHERE o.Id = c.Id AND o.ProcessedAtUtc IS NULL
   AND (o.Status = 'Pending' OR (o.Status = 'Processing' AND o.LockedUntilUtc < $1))`
	claimReturningSQL = `
RETURNING o.Id, o.IdempotencyKey, o.Type, o.Payload, o.LeaseVersion, c.LockedBy, c.LockedUntilUtc`
)

// CandidateSQL is the plain read of the oldest claimable row: the naive claim's first half.
const CandidateSQL = `SELECT Id, IdempotencyKey, Type, Payload FROM OutboxMessages
 WHERE ` + claimable + `
 ORDER BY CreatedAtUtc, Id
 LIMIT 1`

// keyedSQL is a keyed claim's read: the named message, whatever its state, locked (a keyed
// claim waits for a transaction that holds the row rather than skipping it).
const keyedSQL = `SELECT Id, IdempotencyKey, Type, Payload, LockedBy, LockedUntilUtc, LeaseVersion, Status
  FROM OutboxMessages WHERE IdempotencyKey = $1 ORDER BY Id LIMIT 1 FOR UPDATE`

// keyedUpdateSQL takes the keyed candidate: a compare-and-set on the version the read saw.
const keyedUpdateSQL = `UPDATE OutboxMessages
   SET Status = 'Processing', LockedBy = $2, LockedUntilUtc = $3,
       Attempts = Attempts + 1, LeaseVersion = LeaseVersion + 1
 WHERE Id = $4 AND LeaseVersion = $5 AND ` + claimable

// blockerSQL finds why nothing was claimable: the unfinished row whose lease ends first (a row
// with no lease, held by another transaction a moment ago, first of all).
const blockerSQL = `SELECT IdempotencyKey, LockedBy, LockedUntilUtc FROM OutboxMessages
 WHERE ProcessedAtUtc IS NULL
 ORDER BY LockedUntilUtc NULLS FIRST, Id
 LIMIT 1`

// reqTimes is the one place a claim's times are read: now and the lease end, as parameters
// (engine's "Time in a request": fixed, or one reading of req.Clock). A claim's pick does not
// wait for locks (SKIP LOCKED), so it is read just before the statement.
func reqTimes(req engine.ClaimRequest) (now, until time.Time) {
	n, u := req.Times()
	return at(n), at(u)
}

// LoadPending is the naive worker's read: every Pending row, with no claim at all.
func (c *Conn) LoadPending(ctx context.Context) ([]engine.Message, error) {
	rows, err := c.conn.Query(ctx, `SELECT Id, IdempotencyKey, Type, Payload
  FROM OutboxMessages WHERE Status = 'Pending' ORDER BY CreatedAtUtc, Id`)
	if err != nil {
		return nil, fmt.Errorf("load pending: %w", describe(err))
	}
	defer rows.Close()
	return shared.All(rows, "load pending", describe, shared.ScanMessage)
}

// Claim is the atomic claim. Unkeyed it is ClaimSQL, one statement; when it takes nothing, a
// second read says whether work is left (ClaimBlocked) or not (ClaimEmpty). With req.Key set it
// locks that message, then takes it by a compare-and-set or reports why it cannot.
func (c *Conn) Claim(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	if req.Key != "" {
		var res engine.ClaimResult
		err := c.inTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
			var err error
			res, err = c.claimKeyed(ctx, tx, req)
			return err
		})
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return engine.ClaimResult{}, err
	}
	if req.WaitForLocks {
		return c.claimWaiting(context.WithoutCancel(ctx), req)
	}
	return claimOne(context.WithoutCancel(ctx), c.conn, req)
}

// claimOne is the unkeyed claim, ClaimSQL, on q (the worker's connection, or its transaction in
// the fused step).
func claimOne(ctx context.Context, q querier, req engine.ClaimRequest) (engine.ClaimResult, error) {
	return claimOneWith(ctx, q, req, ClaimSQL, whyNothingAt)
}

// claimOneWith is claimOne with claim as its statement (ClaimSQL, or ClaimDueSQL) and why to say
// why it took nothing.
func claimOneWith(ctx context.Context, q querier, req engine.ClaimRequest, claim string,
	why func(context.Context, querier, time.Time) (engine.ClaimResult, error)) (engine.ClaimResult, error) {
	now, until := reqTimes(req)
	var (
		m         engine.Message
		prevOwner *string
		prevUntil *time.Time
	)
	err := q.QueryRow(ctx, claim, now, req.Worker, until).
		Scan(&m.ID, &m.IdempotencyKey, &m.Type, &m.Payload, &m.LeaseVersion, &prevOwner, &prevUntil)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		res, err := why(ctx, q, now)
		res.At = now
		return res, err
	case err != nil:
		return engine.ClaimResult{}, fmt.Errorf("claim: %w", describe(err))
	}
	m.LockedUntil = until
	return engine.ClaimResult{Outcome: engine.ClaimWon, Message: m, At: now, PrevOwner: str(prevOwner), PrevUntil: fromDB(prevUntil)}, nil
}

// whyNothingAt is whyNothing for a claim at now that may have lost a race: when a row is
// still claimable at now, the claim lost it to another claim under way (ClaimLost, with the
// winner when the database can name its transaction), not to a live lease. A blocked claim
// always names the owner and the end of the lease that held it.
func whyNothingAt(ctx context.Context, q querier, now time.Time) (engine.ClaimResult, error) {
	return whyNothingWith(ctx, q, now, lockedRowSQL, blockerSQL)
}

// whyNothingWith is whyNothingAt with locked as the read of a row claimable at now ($1) and
// blocker as the read of what blocks the claim (blockerSQL's columns).
func whyNothingWith(ctx context.Context, q querier, now time.Time, locked, blocker string) (engine.ClaimResult, error) {
	var (
		id  int64
		key string
	)
	// A row claimable at now that the claim did not take: SKIP LOCKED passed over it, locked by
	// another claim's transaction under way.
	err := q.QueryRow(ctx, locked, at(now)).Scan(&id, &key)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return whyNothingFrom(ctx, q, blocker)
	case err != nil:
		return engine.ClaimResult{}, fmt.Errorf("claim race: %w", describe(err))
	}
	res := engine.ClaimResult{Outcome: engine.ClaimLost, Blocker: key}
	var holder *string // the winner's transaction, still open: its connection's name
	if err := q.QueryRow(ctx, holderSQL, id).Scan(&holder); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return engine.ClaimResult{}, fmt.Errorf("claim race holder: %w", describe(err))
	}
	if h := str(holder); h != "" && h != "leaselab" {
		res.PrevOwner = h
	}
	return res, nil
}

// whyNothing reads, after a claim that took nothing, whether work is left: Blocked by the row
// whose lease ends first, or Empty.
func whyNothing(ctx context.Context, q querier) (engine.ClaimResult, error) {
	return whyNothingFrom(ctx, q, blockerSQL)
}

// whyNothingFrom is whyNothing with blocker as its read (blockerSQL's columns).
func whyNothingFrom(ctx context.Context, q querier, blocker string) (engine.ClaimResult, error) {
	var (
		res   engine.ClaimResult
		owner *string
		until *time.Time
	)
	err := q.QueryRow(ctx, blocker).Scan(&res.Blocker, &owner, &until)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return engine.ClaimResult{Outcome: engine.ClaimEmpty}, nil
	case err != nil:
		return engine.ClaimResult{}, fmt.Errorf("claim blocker: %w", describe(err))
	}
	res.Outcome, res.PrevOwner, res.PrevUntil = engine.ClaimBlocked, str(owner), fromDB(until)
	return res, nil
}

// claimKeyed is a keyed claim, in tx: lock the row, decide, compare-and-set.
func (c *Conn) claimKeyed(ctx context.Context, tx pgx.Tx, req engine.ClaimRequest) (engine.ClaimResult, error) {
	var (
		m         engine.Message
		owner     *string
		prevUntil *time.Time
		seen      int64
		status    string
	)
	err := tx.QueryRow(ctx, keyedSQL, req.Key).Scan(&m.ID, &m.IdempotencyKey, &m.Type, &m.Payload, &owner, &prevUntil, &seen, &status)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.ClaimResult{}, fmt.Errorf("claim %s: no such message", req.Key)
	}
	if err != nil {
		return engine.ClaimResult{}, fmt.Errorf("claim: %w", describe(err))
	}
	now, until := reqTimes(req) // after the row lock (FOR UPDATE waits): engine's "Time in a request"
	blocked := engine.ClaimResult{Outcome: engine.ClaimBlocked, At: now, Blocker: req.Key, PrevOwner: str(owner), PrevUntil: fromDB(prevUntil)}
	switch {
	case status == engine.StatusProcessed:
		return engine.ClaimResult{Outcome: engine.ClaimEmpty, At: now}, nil
	case status == engine.StatusProcessing && (prevUntil == nil || !prevUntil.Before(now)):
		return blocked, nil
	}
	tag, err := tx.Exec(ctx, keyedUpdateSQL, now, req.Worker, until, m.ID, seen)
	if err != nil {
		return engine.ClaimResult{}, fmt.Errorf("claim update: %w", describe(err))
	}
	if tag.RowsAffected() != 1 {
		// A lost race (engine.Conn): reported as lost, never as won.
		return engine.ClaimResult{Outcome: engine.ClaimLost, At: now, Blocker: req.Key}, nil
	}
	m.LeaseVersion, m.LockedUntil = seen+1, until
	return engine.ClaimResult{Outcome: engine.ClaimWon, Message: m, At: now, PrevOwner: str(owner), PrevUntil: fromDB(prevUntil)}, nil
}

// SelectCandidate is the first half of the non-atomic claim: a plain read, its own transaction.
func (c *Conn) SelectCandidate(ctx context.Context, now time.Time) (engine.Message, bool, error) {
	var m engine.Message
	err := c.conn.QueryRow(ctx, CandidateSQL, at(now)).Scan(&m.ID, &m.IdempotencyKey, &m.Type, &m.Payload)
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.Message{}, false, nil
	}
	if err != nil {
		return engine.Message{}, false, fmt.Errorf("select candidate: %w", describe(err))
	}
	return m, true, nil
}

// lockRow takes the row's lock and waits for it, so that a time read afterwards is read after
// every wait (engine's "Time in a request").
const lockRowSQL = `SELECT 1 FROM OutboxMessages WHERE Id = $1 FOR UPDATE`

// TakeUnconditional is the second half of the non-atomic claim: it sets the lease on the row it
// read earlier without checking that the row is still claimable (the bug it teaches), making a
// row another worker finalized meanwhile unfinished again. It locks the row first, as a claim's
// locking read does, and its wait is bounded as the claim's is: with skip-locked on
// (req.WaitForLocks off) it does not wait (NOWAIT), off it waits up to req.LockTimeout. A row
// that another transaction holds locked (an open two-step claim) is not taken: Blocked, nothing
// written. The clock, if any, is read once after the lock.
func (c *Conn) TakeUnconditional(ctx context.Context, req engine.TakeRequest) (engine.TakeResult, error) {
	var res engine.TakeResult
	err := c.inTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		run := context.WithoutCancel(ctx)
		if err := c.lockForTake(run, tx, req, &res); err != nil {
			return err
		}
		now, until := req.Times()
		now, until = at(now), at(until)
		m := &res.Message
		err := tx.QueryRow(run, `UPDATE OutboxMessages
   SET Status = 'Processing', LockedBy = $1, LockedUntilUtc = $2, ProcessedAtUtc = NULL,
       Attempts = Attempts + 1, LeaseVersion = LeaseVersion + 1
 WHERE Id = $3
RETURNING Id, IdempotencyKey, Type, Payload, LeaseVersion`, req.Worker, until, req.ID).
			Scan(&m.ID, &m.IdempotencyKey, &m.Type, &m.Payload, &m.LeaseVersion)
		if err != nil {
			return fmt.Errorf("take message %d: %w", req.ID, describe(err))
		}
		m.LockedUntil, res.At = until, now
		return nil
	})
	if errors.Is(err, errTakeBlocked) {
		now, _ := req.Times()
		res.At = at(now)
		return res, nil
	}
	return res, err
}

// errTakeBlocked rolls back a take whose row another transaction holds locked.
var errTakeBlocked = errors.New("take: the row is locked by another transaction")

// lockForTake locks the take's row in tx, without waiting (NOWAIT) or, with req.WaitForLocks, up
// to req.LockTimeout. When another transaction holds the lock it marks res Blocked (with the
// wait) and returns errTakeBlocked.
func (c *Conn) lockForTake(ctx context.Context, tx pgx.Tx, req engine.TakeRequest, res *engine.TakeResult) error {
	lock := lockRowSQL + ` NOWAIT`
	if req.WaitForLocks {
		ms := max(req.LockTimeout, time.Millisecond).Milliseconds()
		if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, fmt.Sprintf("%dms", ms)); err != nil {
			return fmt.Errorf("take message %d: %w", req.ID, describe(err))
		}
		lock = lockRowSQL
	}
	start := time.Now()
	_, err := tx.Exec(ctx, lock, req.ID)
	switch {
	case isLockNotAvailable(err):
		res.Blocked = true
		if req.WaitForLocks {
			res.LockWait = max(time.Since(start), time.Microsecond)
			c.markWaited(res.LockWait)
		}
		return errTakeBlocked
	case err != nil:
		return fmt.Errorf("take message %d: %w", req.ID, describe(err))
	}
	return nil
}

// Renew extends a lease that the worker still holds, under the same version (a heartbeat). With
// a clock, the row is locked first and the clock read once after.
func (c *Conn) Renew(ctx context.Context, req engine.RenewRequest) (engine.RenewResult, error) {
	var res engine.RenewResult
	err := c.inTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		run := context.WithoutCancel(ctx)
		if req.Clock != nil {
			if _, err := tx.Exec(run, lockRowSQL, req.Message.ID); err != nil {
				return fmt.Errorf("renew %s: %w", req.Message.IdempotencyKey, describe(err))
			}
		}
		now, until := req.Times()
		now, until = at(now), at(until)
		tag, err := tx.Exec(run, `UPDATE OutboxMessages SET LockedUntilUtc = $1
 WHERE Id = $2 AND Status = 'Processing' AND LockedBy = $3 AND LeaseVersion = $4`,
			until, req.Message.ID, req.Worker, req.Message.LeaseVersion)
		if err != nil {
			return fmt.Errorf("renew %s: %w", req.Message.IdempotencyKey, describe(err))
		}
		res.At, res.Renewed = now, tag.RowsAffected() == 1
		if res.Renewed {
			res.Until = until
		}
		return nil
	})
	return res, err
}

// dueSQL is when a Pending row may be claimed: never failed, or its backoff is over ($1 is now).
const dueSQL = `(NextAttemptUtc IS NULL OR NextAttemptUtc <= $1)`

// ClaimDueSQL is ClaimSQL for ClaimDue: it takes the older of two picks, each locked as the
// claim's is (FOR UPDATE SKIP LOCKED), and its UPDATE also requires the row to be due:
//
//   - f, the oldest claimable row that never failed (OutboxMessages_Fresh, in claim order);
//   - b, the oldest claimable row among the first dueScan whose backoff is over
//     (OutboxMessages_Backoff, the range up to $1, in the order the backoffs end).
//
// Neither walks the rows still in their backoff (the plan test pins it): schema 1's due claim
// walked OutboxMessages_Claimable in claim order and passed over every one of them (12-18 ms a
// claim behind 10,000). The pick that loses keeps its row locked until the statement commits,
// a moment: another claim passes over it, as over any row a claim under way holds.
const ClaimDueSQL = `WITH f AS MATERIALIZED (` + dueFreshSQL + `
     FOR UPDATE SKIP LOCKED),
b AS MATERIALIZED (` + dueBackoffSQL + `
     FOR UPDATE OF o SKIP LOCKED),
c AS (SELECT * FROM f UNION ALL SELECT * FROM b ORDER BY CreatedAtUtc, Id LIMIT 1)
UPDATE OutboxMessages o
   SET Status = 'Processing', LockedBy = $2, LockedUntilUtc = $3,
       Attempts = o.Attempts + 1, LeaseVersion = o.LeaseVersion + 1
  FROM c
 WHERE o.Id = c.Id AND o.ProcessedAtUtc IS NULL
   AND (o.Status = 'Pending' OR (o.Status = 'Processing' AND o.LockedUntilUtc < $1))
   AND (o.NextAttemptUtc IS NULL OR o.NextAttemptUtc <= $1)` + claimReturningSQL

// The due claim's two picks, without their locks (lockedDueSQL reads them as they are).
const (
	dueFreshSQL = `
  SELECT Id, IdempotencyKey, LockedBy, LockedUntilUtc, CreatedAtUtc FROM OutboxMessages
   WHERE NextAttemptUtc IS NULL AND ` + claimable + `
   ORDER BY CreatedAtUtc, Id
   LIMIT 1`
	// dueBackoffSQL orders by the columns of the index read (d), not the table's: ordered by
	// o's, a generic plan (pgx prepares the statement) walked OutboxMessages_Claimable in claim
	// order, every row of it, rather than sort the dueScan rows d found.
	dueBackoffSQL = `
  SELECT o.Id, o.IdempotencyKey, o.LockedBy, o.LockedUntilUtc, o.CreatedAtUtc
    FROM (SELECT Id, CreatedAtUtc FROM OutboxMessages
           WHERE ProcessedAtUtc IS NULL AND NextAttemptUtc IS NOT NULL AND NextAttemptUtc <= $1
           ORDER BY NextAttemptUtc, CreatedAtUtc, Id
           LIMIT ` + dueScan + `) d
    JOIN OutboxMessages o ON o.Id = d.Id
   WHERE o.ProcessedAtUtc IS NULL AND (o.Status = 'Pending' OR (o.Status = 'Processing' AND o.LockedUntilUtc < $1))
   ORDER BY d.CreatedAtUtc, d.Id
   LIMIT 1`
)

// dueScan bounds the due claim's read of the rows whose backoff is over, as SQLite's does
// (store/conn.go): the oldest of the dueScan whose backoff ended first.
const dueScan = "64"

// lockedDueSQL is lockedRowSQL for ClaimDue: the oldest row claimable and due at $1, by the
// same two picks as ClaimDueSQL.
const lockedDueSQL = `SELECT Id, IdempotencyKey FROM (
  (` + dueFreshSQL + `)
  UNION ALL
  (` + dueBackoffSQL + `)) u
 ORDER BY CreatedAtUtc, Id
 LIMIT 1`

// dueBlockerSQL is blockerSQL for ClaimDue: the unfinished row whose lease or backoff ends first
// (a backoff has no owner; a row with neither, held by another transaction a moment ago, first).
const dueBlockerSQL = `SELECT IdempotencyKey, CASE WHEN Status = 'Processing' THEN LockedBy END,
       CASE WHEN Status = 'Pending' THEN NextAttemptUtc ELSE LockedUntilUtc END AS Until
  FROM OutboxMessages
 WHERE ProcessedAtUtc IS NULL
 ORDER BY Until NULLS FIRST, Id
 LIMIT 1`

// ClaimDue is the claim that honours NextAttemptUtc (retry.Conn): ClaimDueSQL, one statement,
// then, when it took nothing, why (a lost race, a lease or a backoff, or no work).
func (c *Conn) ClaimDue(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	if req.Key != "" {
		return engine.ClaimResult{}, fmt.Errorf("claim due %s: a due claim is never keyed", req.Key)
	}
	if err := ctx.Err(); err != nil {
		return engine.ClaimResult{}, err
	}
	return claimOneWith(context.WithoutCancel(ctx), c.conn, req, ClaimDueSQL,
		func(ctx context.Context, q querier, now time.Time) (engine.ClaimResult, error) {
			return whyNothingWith(ctx, q, now, lockedDueSQL, dueBlockerSQL)
		})
}

// finalizePaymentSQL is the finalize's first statement, as the lesson writes it.
const finalizePaymentSQL = `UPDATE Payments SET PaymentStatus = $1, TransactionId = $2 WHERE IdempotencyKey = $3`

// finalizeReadSQL reads the row just before the finalize writes it, locked, so that what it
// says is still true when the UPDATE runs.
const finalizeReadSQL = `SELECT Status, LockedBy, LeaseVersion FROM OutboxMessages WHERE Id = $1 FOR UPDATE`

// finalizeOutbox is the finalize's outbox UPDATE and its arguments, guarded by the ownership
// check and by the fencing token when asked. It returns the row's LeaseVersion (which the
// finalize does not change), so that the ledger knows the version it wrote over.
func finalizeOutbox(req engine.FinalizeRequest, now time.Time) (string, []any) {
	q := `UPDATE OutboxMessages
   SET Status = 'Processed', ProcessedAtUtc = $1, LockedUntilUtc = NULL
 WHERE Id = $2`
	args := []any{now, req.Message.ID}
	if req.OwnershipCheck {
		args = append(args, req.Worker)
		q += fmt.Sprintf(" AND Status = 'Processing' AND LockedBy = $%d", len(args))
	}
	if req.Fencing {
		args = append(args, req.Message.LeaseVersion)
		q += fmt.Sprintf(" AND LeaseVersion = $%d", len(args))
	}
	return q + "\nRETURNING LeaseVersion", args
}

// Finalize writes the provider's outcome to the payment and marks the message Processed, in one
// transaction. With req.OwnershipCheck the outbox UPDATE also requires Status='Processing' AND
// LockedBy=worker (and, with req.Fencing, the worker's lease version); unless it changes exactly
// one row the whole transaction rolls back, the payment update with it.
//
// Under READ COMMITTED the guarded UPDATE waits for a transaction that holds the row (a reclaim
// in flight) and then judges the row as that transaction left it: a finalize that loses that
// race changes nothing and says so (Committed false), as engine.Conn requires.
func (c *Conn) Finalize(ctx context.Context, req engine.FinalizeRequest) (engine.FinalizeResult, error) {
	if c.pipelined(req) {
		if err := ctx.Err(); err != nil {
			return engine.FinalizeResult{}, err
		}
		return c.finalizePipelined(context.WithoutCancel(ctx), req)
	}
	var res engine.FinalizeResult
	err := c.inTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		res, err = c.finalizeTx(ctx, tx, req)
		return err
	})
	return shared.Finalized(res, err)
}

// finalizeTx is the body of Finalize, in tx. Every finalize locks the payment first and the
// outbox row second, so that two finalizes of one message never deadlock. It returns
// shared.ErrRolledBack (with res filled) when the UPDATE changed no row.
func (c *Conn) finalizeTx(ctx context.Context, tx pgx.Tx, req engine.FinalizeRequest) (engine.FinalizeResult, error) {
	var res engine.FinalizeResult
	run := context.WithoutCancel(ctx)
	key := req.Message.IdempotencyKey
	var txID *string
	if req.TransactionID != "" {
		txID = &req.TransactionID
	}
	if _, err := tx.Exec(run, finalizePaymentSQL, req.PaymentStatus, txID, key); err != nil {
		return res, fmt.Errorf("finalize %s: update payment: %w", key, describe(err))
	}
	if err := c.hold.Wait(ctx, key); err != nil {
		return res, fmt.Errorf("finalize %s: held: %w", key, err) // rolled back
	}
	if !req.OwnershipCheck {
		if err := readPrior(run, tx, req.Message, &res); err != nil {
			return res, err
		}
	} else if req.Clock != nil {
		if _, err := tx.Exec(run, lockRowSQL, req.Message.ID); err != nil {
			return res, fmt.Errorf("finalize %s: lock row: %w", key, describe(err))
		}
	}
	// Every lock this finalize waits for is held now (payment, outbox row): read the time.
	now := at(req.Time())
	res.At = now
	var version int64
	update, args := finalizeOutbox(req, now)
	err := tx.QueryRow(run, update, args...).Scan(&version)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if req.OwnershipCheck {
			// The guard failed: not (or no longer) this worker's message. Say why, then roll back.
			if err := readPrior(run, tx, req.Message, &res); err != nil {
				return res, err
			}
		}
		return res, shared.ErrRolledBack
	case err != nil:
		return res, fmt.Errorf("finalize %s: update outbox: %w", key, describe(err))
	}
	res.RowsAffected, res.At = 1, now
	if req.OwnershipCheck {
		res.PriorStatus, res.PriorOwner, res.PriorVersion = engine.StatusProcessing, req.Worker, version
	}
	return res, nil
}

// readPrior reads m's row, as it is now inside tx, into res's Prior fields.
func readPrior(ctx context.Context, tx querier, m engine.Message, res *engine.FinalizeResult) error {
	var owner *string
	err := tx.QueryRow(ctx, finalizeReadSQL, m.ID).Scan(&res.PriorStatus, &owner, &res.PriorVersion)
	if err != nil {
		return fmt.Errorf("finalize %s: read row: %w", m.IdempotencyKey, describe(err))
	}
	res.PriorOwner = str(owner)
	return nil
}
