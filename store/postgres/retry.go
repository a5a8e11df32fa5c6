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

// The rest of a message's life (issue 20), on PostgreSQL. Each write is one statement
// (autocommit), guarded in its WHERE, its rows affected checked: a failed attempt and a rescue
// on the worker's connection, a redrive on the admin pool. The due claim is the claim's (conn.go).

// failSQL releases a failed attempt's lease, guarded as a fenced finalize is: to Pending with
// its next attempt ($3), or, once Attempts has reached $1 (when $1 > 0), to DeadLettered with a
// ProcessedAtUtc ($2). The error ($4) is kept either way.
const failSQL = `UPDATE OutboxMessages
   SET Status = CASE WHEN $1::bigint > 0 AND Attempts >= $1::bigint THEN 'DeadLettered' ELSE 'Pending' END,
       ProcessedAtUtc = CASE WHEN $1::bigint > 0 AND Attempts >= $1::bigint THEN $2::timestamptz END,
       NextAttemptUtc = CASE WHEN $1::bigint > 0 AND Attempts >= $1::bigint THEN NULL ELSE $3::timestamptz END,
       LockedUntilUtc = NULL, LastError = $4
 WHERE Id = $5 AND Status = 'Processing' AND LockedBy = $6 AND LeaseVersion = $7
RETURNING Status, Attempts`

// Fail releases the worker's lease after a failed attempt (engine.FailRequest). No row returned:
// the guard failed, and nothing changed (Released false).
func (c *Conn) Fail(ctx context.Context, req engine.FailRequest) (engine.FailResult, error) {
	if err := ctx.Err(); err != nil {
		return engine.FailResult{}, err
	}
	now := at(req.Now)
	res := engine.FailResult{At: now}
	var next *time.Time
	if !req.NextAttempt.IsZero() {
		n := at(req.NextAttempt)
		next = &n
	}
	var status string
	err := c.conn.QueryRow(context.WithoutCancel(ctx), failSQL, req.MaxAttempts, now, next, req.Error,
		req.Message.ID, req.Worker, req.Message.LeaseVersion).Scan(&status, &res.Attempts)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return res, nil // the guard failed: not (or no longer) this worker's message
	case err != nil:
		return engine.FailResult{}, fmt.Errorf("fail %s: %w", req.Message.IdempotencyKey, describe(err))
	}
	res.Released, res.DeadLettered = true, status == engine.StatusDeadLettered
	return res, nil
}

// expiredLeasesSQL is the rescuer's read: every lease that has ended at $1, the first to end
// first.
const expiredLeasesSQL = `SELECT Id, IdempotencyKey, LockedBy, LockedUntilUtc, LeaseVersion
  FROM OutboxMessages
 WHERE Status = 'Processing' AND LockedUntilUtc < $1
 ORDER BY LockedUntilUtc, Id`

// Expired reads the leases that have ended at now (engine.RescueConn), in one statement of its own:
// what the rescuer then writes may have changed since.
func (c *Conn) Expired(ctx context.Context, now time.Time) ([]engine.Expired, error) {
	rows, err := c.conn.Query(ctx, expiredLeasesSQL, at(now))
	if err != nil {
		return nil, fmt.Errorf("expired leases: %w", describe(err))
	}
	defer rows.Close()
	return shared.All(rows, "expired leases", describe, func(r shared.Rows) (engine.Expired, error) {
		var e engine.Expired
		var owner *string
		err := r.Scan(&e.ID, &e.IdempotencyKey, &owner, &e.LockedUntil, &e.LeaseVersion)
		e.LockedBy, e.LockedUntil = str(owner), e.LockedUntil.UTC()
		return e, err
	})
}

// The rescue's UPDATE, guarded (everything the rescuer saw, checked again) or not (the row by
// Id alone: whatever it has become, even Processed, it is Pending again).
const (
	rescueGuardedSQL = `UPDATE OutboxMessages SET Status = 'Pending', LockedUntilUtc = NULL
 WHERE Id = $1 AND Status = 'Processing' AND LockedUntilUtc < $2 AND LockedBy = $3 AND LeaseVersion = $4`
	rescueUnguardedSQL = `UPDATE OutboxMessages SET Status = 'Pending', LockedUntilUtc = NULL, ProcessedAtUtc = NULL
 WHERE Id = $1`
)

// Rescue moves one expired lease back to Pending (engine.RescueRequest); rows affected say
// whether it did.
func (c *Conn) Rescue(ctx context.Context, req engine.RescueRequest) (engine.RescueResult, error) {
	if err := ctx.Err(); err != nil {
		return engine.RescueResult{}, err
	}
	if req.Fail {
		return c.prune(ctx, req) // a pruner fails the message instead (prune.go)
	}
	update, args := rescueUnguardedSQL, []any{req.Seen.ID}
	if req.Guarded {
		update = rescueGuardedSQL
		args = append(args, at(req.Now), req.Seen.LockedBy, req.Seen.LeaseVersion)
	}
	tag, err := c.conn.Exec(context.WithoutCancel(ctx), update, args...)
	if err != nil {
		return engine.RescueResult{}, fmt.Errorf("rescue %s: %w", req.Seen.IdempotencyKey, describe(err))
	}
	return engine.RescueResult{Rescued: tag.RowsAffected() == 1}, nil
}

// redriveSQL moves a dead letter back to Pending, claimable at once, its attempts reset.
const redriveSQL = `UPDATE OutboxMessages
   SET Status = 'Pending', ProcessedAtUtc = NULL, NextAttemptUtc = NULL, LockedUntilUtc = NULL, Attempts = 0
 WHERE IdempotencyKey = $1 AND Status = 'DeadLettered'`

// Redrive moves the dead-lettered message key back to Pending (engine.Redriver), in one
// statement; any other message is refused with engine.ErrNotDeadLettered.
func (db *DB) Redrive(ctx context.Context, key string) error {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	return shared.Redrive(key, describe, func() (int64, error) {
		tag, err := db.admin.Exec(ctx, redriveSQL, key)
		return tag.RowsAffected(), err
	}, func() (engine.RetryState, error) { return db.RetryState(ctx, key) }, pgx.ErrNoRows)
}

// RetryState reads what failed attempts left on message key's row (engine.RetryReader).
func (db *DB) RetryState(ctx context.Context, key string) (engine.RetryState, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	var st engine.RetryState
	var next *time.Time
	var lastErr *string
	err := db.admin.QueryRow(ctx, `SELECT Status, Attempts, NextAttemptUtc, LastError
  FROM OutboxMessages WHERE IdempotencyKey = $1`, key).Scan(&st.Status, &st.Attempts, &next, &lastErr)
	if err != nil {
		return engine.RetryState{}, fmt.Errorf("retry state %s: %w", key, describe(err))
	}
	st.NextAttempt, st.LastError = fromDB(next), str(lastErr)
	return st, nil
}

// A worker connection is the rescuer's too.
var _ engine.RescueConn = (*Conn)(nil)
