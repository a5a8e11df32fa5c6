package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"leaselab/engine"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The claim in two steps (engine.RowLocker), and the claim that waits for row locks (skip-locked
// off). Both are one transaction: BEGIN; the locking read of the oldest claimable row (FOR
// UPDATE, with SKIP LOCKED or, waiting, under a lock_timeout); then the lesson's conditional
// UPDATE on that row and COMMIT. The two-step claim leaves the transaction open between the
// two, so that another worker's claim meets the row lock; the waiting claim runs them back to
// back.

var _ engine.RowLocker = (*Conn)(nil)

// lockPickSQL is the claim's locking read: the oldest claimable row, locked; $1 is now.
func lockPickSQL(skipLocked bool) string {
	q := `SELECT Id, IdempotencyKey, Type, Payload, LockedBy, LockedUntilUtc, LeaseVersion FROM OutboxMessages
 WHERE ` + claimable + `
 ORDER BY CreatedAtUtc, Id
 LIMIT 1
   FOR UPDATE`
	if skipLocked {
		q += ` SKIP LOCKED`
	}
	return q
}

// lockedRowSQL is, when the locking read met a lock, the row it met: the oldest claimable.
const lockedRowSQL = `SELECT Id, IdempotencyKey FROM (` + CandidateSQL + `) c`

// holderSQL names the connection whose transaction holds row $1's lock: the row's xmax is the
// locking transaction's id, and pg_stat_activity says whose backend runs it.
const holderSQL = `SELECT a.application_name FROM pg_stat_activity a
  JOIN OutboxMessages o ON a.backend_xid = o.xmax WHERE o.Id = $1`

// openClaim is a two-step claim between its steps: the transaction and the row it locked.
type openClaim struct {
	tx        pgx.Tx
	msg       engine.Message // as read; LeaseVersion is the version seen
	prevOwner string
	prevUntil time.Time
	// The wait for another transaction's row lock, when the read waited: how long, for which
	// row, and whose transaction held it.
	wait              time.Duration
	waitedFor, holder string
}

// nameSelf sets the connection's application_name to the worker's id, once, so that another
// connection can say whose transaction holds a lock (pg_stat_activity).
func (c *Conn) nameSelf(ctx context.Context, worker string) error {
	if c.named == worker {
		return nil
	}
	if _, err := c.conn.Exec(ctx, `SELECT set_config('application_name', $1, false)`, worker); err != nil {
		return fmt.Errorf("name the connection: %w", describe(err))
	}
	c.named = worker
	return nil
}

// LockClaim begins a claim's transaction and locks the oldest claimable row, leaving the
// transaction open for FinishClaim (engine.RowLocker).
func (c *Conn) LockClaim(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	if c.open != nil {
		return engine.ClaimResult{}, fmt.Errorf("lock: a claim of %s is already open on this connection", c.open.msg.IdempotencyKey)
	}
	if err := ctx.Err(); err != nil {
		return engine.ClaimResult{}, err
	}
	return c.lockStep(context.WithoutCancel(ctx), req)
}

// FinishClaim takes the row LockClaim locked, with the claim's conditional UPDATE, and commits
// (engine.RowLocker).
func (c *Conn) FinishClaim(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	if c.open == nil {
		return engine.ClaimResult{}, errors.New("finish claim: no claim is open on this connection")
	}
	return c.finishStep(context.WithoutCancel(ctx), req)
}

// claimWaiting is the claim with skip-locked off: both steps back to back. With a clock, the
// time is read after the locking read's wait (engine's "Time in a request").
func (c *Conn) claimWaiting(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	res, err := c.lockStep(ctx, req)
	if err != nil || res.Outcome != engine.ClaimWon {
		return res, err
	}
	return c.finishStep(ctx, req)
}

// lockStep is BEGIN and the locking read. On ClaimWon the transaction stays open in c.open.
//
// Skipping locked rows, the read never waits. Waiting for them (skip-locked off), it first
// tries the read with NOWAIT: when that meets a lock, the claim knows it is about to wait, and
// for which row and whose transaction; then it waits, under lock_timeout, and the wait is
// measured. After a wait that ends with the holder's commit, the read takes the next claimable
// row (its LockRows node judges the row it waited for again and moves on).
func (c *Conn) lockStep(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	if err := c.nameSelf(ctx, req.Worker); err != nil {
		return engine.ClaimResult{}, err
	}
	now, _ := reqTimes(req)
	tx, err := c.conn.Begin(ctx)
	if err != nil {
		return engine.ClaimResult{}, fmt.Errorf("begin: %w", describe(err))
	}
	oc := &openClaim{tx: tx}
	if req.WaitForLocks {
		err = c.pickWaiting(ctx, oc, req, now)
	} else {
		err = pick(ctx, oc, lockPickSQL(true), now)
	}
	if err != nil {
		oc.tx.Rollback(ctx) // the transaction of the last read (pickWaiting may have begun a second)
		return c.lockFailed(ctx, err, oc, now)
	}
	c.open = oc
	return engine.ClaimResult{Outcome: engine.ClaimWon, Message: oc.msg, At: now, PrevOwner: oc.prevOwner, PrevUntil: oc.prevUntil,
		LockWait: oc.wait, LockHolder: oc.holder, WaitedFor: oc.waitedFor}, nil
}

// pick runs a locking read into oc.
func pick(ctx context.Context, oc *openClaim, sql string, now time.Time) error {
	var (
		owner *string
		until *time.Time
		m     = &oc.msg
	)
	err := oc.tx.QueryRow(ctx, sql, now).Scan(&m.ID, &m.IdempotencyKey, &m.Type, &m.Payload, &owner, &until, &m.LeaseVersion)
	oc.prevOwner, oc.prevUntil = str(owner), fromDB(until)
	return err
}

// pickWaiting is the locking read that waits for a locked row: NOWAIT first, to learn whether
// it will wait and for what; then, in a new transaction, the waiting read under lock_timeout,
// timed. (Not a savepoint around the NOWAIT: a row locked inside one carries the
// subtransaction's id, which pg_stat_activity does not show, and its holder could not be named.)
func (c *Conn) pickWaiting(ctx context.Context, oc *openClaim, req engine.ClaimRequest, now time.Time) error {
	err := pick(ctx, oc, lockPickSQL(false)+` NOWAIT`, now)
	if !isLockNotAvailable(err) {
		return err
	}
	oc.tx.Rollback(ctx)
	// The oldest claimable row is locked: which one, and whose transaction holds it.
	var (
		id     int64
		holder *string
	)
	if err := c.conn.QueryRow(ctx, lockedRowSQL, now).Scan(&id, &oc.waitedFor); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if err := c.conn.QueryRow(ctx, holderSQL, id).Scan(&holder); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	oc.holder = str(holder)
	if oc.tx, err = c.conn.Begin(ctx); err != nil {
		return err
	}
	ms := max(req.LockTimeout, time.Millisecond).Milliseconds()
	if _, err := oc.tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, fmt.Sprintf("%dms", ms)); err != nil {
		return err
	}
	start := time.Now()
	err = pick(ctx, oc, lockPickSQL(false), now)
	oc.wait = max(time.Since(start), time.Microsecond)
	c.markWaited(oc.wait)
	return err
}

// isLockNotAvailable reports PostgreSQL's lock_not_available: NOWAIT met a lock, or lock_timeout
// ran out.
func isLockNotAvailable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
}

// lockFailed is the result of a locking read that took no row (its transaction rolled back):
// the lock_timeout ran out while it waited, or nothing is claimable (perhaps after a wait).
func (c *Conn) lockFailed(ctx context.Context, err error, oc *openClaim, now time.Time) (engine.ClaimResult, error) {
	waited := engine.ClaimResult{At: now, LockWait: oc.wait, LockHolder: oc.holder, WaitedFor: oc.waitedFor}
	switch {
	case isLockNotAvailable(err) && oc.wait > 0:
		waited.Outcome, waited.Blocker = engine.ClaimBlocked, oc.waitedFor
		return waited, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return engine.ClaimResult{}, fmt.Errorf("claim: %w", describe(err))
	}
	res, werr := whyNothing(ctx, c.conn)
	res.At, res.LockWait, res.LockHolder, res.WaitedFor = now, oc.wait, oc.holder, oc.waitedFor
	return res, werr
}

// finishStep is the claim's conditional UPDATE of the locked row, then COMMIT.
func (c *Conn) finishStep(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	oc := c.open
	c.open = nil
	now, until := reqTimes(req) // the row lock is held: every wait is behind
	tag, err := oc.tx.Exec(ctx, keyedUpdateSQL, now, req.Worker, until, oc.msg.ID, oc.msg.LeaseVersion)
	if err != nil {
		oc.tx.Rollback(ctx)
		return engine.ClaimResult{}, fmt.Errorf("claim update: %w", describe(err))
	}
	if tag.RowsAffected() != 1 {
		oc.tx.Rollback(ctx)
		return engine.ClaimResult{Outcome: engine.ClaimBlocked, At: now, Blocker: oc.msg.IdempotencyKey,
			PrevOwner: oc.prevOwner, PrevUntil: oc.prevUntil}, nil
	}
	if err := oc.tx.Commit(ctx); err != nil {
		return engine.ClaimResult{}, fmt.Errorf("commit: %w", describe(err))
	}
	m := oc.msg
	m.LeaseVersion, m.LockedUntil = m.LeaseVersion+1, until
	return engine.ClaimResult{Outcome: engine.ClaimWon, Message: m, At: now, PrevOwner: oc.prevOwner, PrevUntil: oc.prevUntil,
		LockWait: oc.wait, LockHolder: oc.holder, WaitedFor: oc.waitedFor}, nil
}
