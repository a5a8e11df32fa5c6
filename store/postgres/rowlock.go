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
func (c *Conn) lockStep(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error) {
	if err := c.nameSelf(ctx, req.Worker); err != nil {
		return engine.ClaimResult{}, err
	}
	now, _ := reqTimes(req)
	tx, err := c.conn.Begin(ctx)
	if err != nil {
		return engine.ClaimResult{}, fmt.Errorf("begin: %w", describe(err))
	}
	if req.WaitForLocks {
		ms := max(req.LockTimeout, time.Millisecond).Milliseconds()
		if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, fmt.Sprintf("%dms", ms)); err != nil {
			tx.Rollback(ctx)
			return engine.ClaimResult{}, fmt.Errorf("claim: lock_timeout: %w", describe(err))
		}
	}
	var (
		oc    = openClaim{tx: tx}
		owner *string
		until *time.Time
		m     = &oc.msg
	)
	start := time.Now()
	err = tx.QueryRow(ctx, lockPickSQL(!req.WaitForLocks), now).
		Scan(&m.ID, &m.IdempotencyKey, &m.Type, &m.Payload, &owner, &until, &m.LeaseVersion)
	waited := time.Since(start)
	if err != nil {
		tx.Rollback(ctx)
		return c.lockFailed(ctx, err, req, now, waited)
	}
	oc.prevOwner, oc.prevUntil = str(owner), fromDB(until)
	c.open = &oc
	return engine.ClaimResult{Outcome: engine.ClaimWon, Message: oc.msg, At: now, PrevOwner: oc.prevOwner, PrevUntil: oc.prevUntil}, nil
}

// lockFailed is the result of a locking read that took no row (its transaction rolled back):
// the lock_timeout ran out, the row it waited for was taken meanwhile, or nothing is claimable.
func (c *Conn) lockFailed(ctx context.Context, err error, req engine.ClaimRequest, now time.Time, waited time.Duration) (engine.ClaimResult, error) {
	var pe *pgconn.PgError
	timedOut := errors.As(err, &pe) && pe.Code == "55P03" && req.WaitForLocks
	if err != nil && !timedOut && !errors.Is(err, pgx.ErrNoRows) {
		return engine.ClaimResult{}, fmt.Errorf("claim: %w", describe(err))
	}
	cand, ok, cerr := c.SelectCandidate(ctx, now)
	if cerr != nil {
		return engine.ClaimResult{}, cerr
	}
	switch {
	case timedOut && ok:
		res := engine.ClaimResult{Outcome: engine.ClaimBlocked, At: now, Blocker: cand.IdempotencyKey, LockWait: waited}
		var holder *string
		switch herr := c.conn.QueryRow(ctx, holderSQL, cand.ID).Scan(&holder); {
		case herr == nil:
			res.LockHolder = str(holder)
		case !errors.Is(herr, pgx.ErrNoRows):
			return engine.ClaimResult{}, fmt.Errorf("claim: lock holder: %w", describe(herr))
		}
		return res, nil
	case timedOut:
		// The holder committed just as the wait ran out and took the last claimable row.
		return engine.ClaimResult{Outcome: engine.ClaimBlocked, At: now, LockWait: waited}, nil
	case ok && req.WaitForLocks:
		// It waited for a row that was no longer claimable once the lock was released (LIMIT 1
		// judged it again and returned nothing), though other rows are.
		return engine.ClaimResult{Outcome: engine.ClaimBlocked, At: now, LockWait: waited}, nil
	}
	res, werr := whyNothing(ctx, c.conn)
	res.At = now
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
	return engine.ClaimResult{Outcome: engine.ClaimWon, Message: m, At: now, PrevOwner: oc.prevOwner, PrevUntil: oc.prevUntil}, nil
}

// RowLocks reports that PostgreSQL locks rows: a claim can pass over a locked row (SKIP LOCKED)
// or wait for it (engine.HasRowLocks).
func (db *DB) RowLocks() bool { return true }
