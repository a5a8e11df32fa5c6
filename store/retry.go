package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"
)

// The rest of a message's life (issue 20), on SQLite. A failed attempt and a rescue are
// each one BEGIN IMMEDIATE transaction on the worker's connection, as the claim and the finalize
// are; a redrive is one statement on the admin pool. The due claim is the claim's (conn.go).

// failSQL releases a failed attempt's lease, guarded as a fenced finalize is: to Pending with
// its next attempt, or, once Attempts has reached :max (when :max > 0), to DeadLettered with a
// ProcessedAtUtc. The error is kept either way.
const failSQL = `UPDATE OutboxMessages
   SET Status = CASE WHEN :max > 0 AND Attempts >= :max THEN 'DeadLettered' ELSE 'Pending' END,
       ProcessedAtUtc = CASE WHEN :max > 0 AND Attempts >= :max THEN :now END,
       NextAttemptUtc = CASE WHEN :max > 0 AND Attempts >= :max THEN NULL ELSE :next END,
       LockedUntilUtc = NULL, LastError = :error
 WHERE Id = :id AND Status = 'Processing' AND LockedBy = :worker AND LeaseVersion = :version
RETURNING Status, Attempts`

// Fail releases the worker's lease after a failed attempt (engine.FailRequest). The UPDATE's
// guard is checked by the row it returns: none, and nothing changed (Released false).
func (c *Conn) Fail(ctx context.Context, req engine.FailRequest) (engine.FailResult, error) {
	res := engine.FailResult{At: req.Now}
	var next any
	if !req.NextAttempt.IsZero() {
		next = FormatTime(req.NextAttempt)
	}
	err := c.inTx(ctx, func(t txn) error {
		var status string
		err := t.queryRow(failSQL, sql.Named("max", req.MaxAttempts), sql.Named("now", FormatTime(req.Now)),
			sql.Named("next", next), sql.Named("error", req.Error), sql.Named("id", req.Message.ID),
			sql.Named("worker", req.Worker), sql.Named("version", req.Message.LeaseVersion)).Scan(&status, &res.Attempts)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil // the guard failed: not (or no longer) this worker's message
		case err != nil:
			return fmt.Errorf("fail %s: %w", req.Message.IdempotencyKey, describe(err))
		}
		res.Released, res.DeadLettered = true, status == engine.StatusDeadLettered
		return nil
	})
	if err != nil {
		return engine.FailResult{}, err
	}
	return res, nil
}

// expiredLeasesSQL is the rescuer's read: every lease that has ended, the first to end first
// (OutboxMessages_Queue's leases).
const expiredLeasesSQL = `SELECT Id, IdempotencyKey, LockedBy, LockedUntilUtc, LeaseVersion
  FROM OutboxMessages
 WHERE ProcessedAtUtc IS NULL AND Status = 'Processing' AND ` + waitEnd + ` < :now
 ORDER BY ` + waitEnd + `, CreatedAtUtc`

// Expired reads the leases that have ended at now (engine.RescueConn), a plain read outside any
// transaction: what the rescuer then writes may have changed since.
func (c *Conn) Expired(ctx context.Context, now time.Time) ([]engine.Expired, error) {
	if c.broken != nil {
		return nil, c.broken
	}
	rows, err := txn{ctx: ctx, c: c}.query(expiredLeasesSQL, sql.Named("now", FormatTime(now)))
	if err != nil {
		return nil, fmt.Errorf("expired leases: %w", describe(err))
	}
	defer rows.Close()
	return shared.All(rows, "expired leases", describe, func(r shared.Rows) (engine.Expired, error) {
		var e engine.Expired
		var until string
		err := r.Scan(&e.ID, &e.IdempotencyKey, &e.LockedBy, &until, &e.LeaseVersion)
		e.LockedUntil, _ = ParseTime(until)
		return e, err
	})
}

// The rescue's UPDATE, guarded (everything the rescuer saw, checked again) or not (the row by
// Id alone: whatever it has become, even Processed, it is Pending again).
const (
	rescueGuardedSQL = `UPDATE OutboxMessages SET Status = 'Pending', LockedUntilUtc = NULL
 WHERE Id = :id AND Status = 'Processing' AND LockedUntilUtc < :now
   AND LockedBy = :owner AND LeaseVersion = :version`
	rescueUnguardedSQL = `UPDATE OutboxMessages SET Status = 'Pending', LockedUntilUtc = NULL, ProcessedAtUtc = NULL
 WHERE Id = :id`
)

// Rescue moves one expired lease back to Pending (engine.RescueRequest); rows affected say
// whether it did.
func (c *Conn) Rescue(ctx context.Context, req engine.RescueRequest) (engine.RescueResult, error) {
	if req.Fail {
		return c.prune(ctx, req) // a pruner fails the message instead (prune.go)
	}
	update, args := rescueUnguardedSQL, []any{sql.Named("id", req.Seen.ID)}
	if req.Guarded {
		update = rescueGuardedSQL
		args = append(args, sql.Named("now", FormatTime(req.Now)), sql.Named("owner", req.Seen.LockedBy),
			sql.Named("version", req.Seen.LeaseVersion))
	}
	return c.rescueRow(ctx, "rescue", req.Seen.IdempotencyKey, update, args)
}

// rescueRow runs a rescuer's one guarded (or unguarded) UPDATE of a message's row in a
// transaction of its own: what says whether it rescued (or pruned) the row is the rows affected.
func (c *Conn) rescueRow(ctx context.Context, verb, key, update string, args []any) (engine.RescueResult, error) {
	var n int64
	err := c.inTx(ctx, func(t txn) error {
		r, err := t.exec(update, args...)
		if err == nil {
			n, err = r.RowsAffected()
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", verb, key, describe(err))
		}
		return nil
	})
	if err != nil {
		return engine.RescueResult{}, err
	}
	return engine.RescueResult{Rescued: n == 1}, nil
}

// redriveSQL moves a dead letter back to Pending, claimable at once, its attempts reset.
const redriveSQL = `UPDATE OutboxMessages
   SET Status = 'Pending', ProcessedAtUtc = NULL, NextAttemptUtc = NULL, LockedUntilUtc = NULL, Attempts = 0
 WHERE IdempotencyKey = :key AND Status = 'DeadLettered'`

// Redrive moves the dead-lettered message key back to Pending (engine.Redriver), in one
// statement; any other message is refused with engine.ErrNotDeadLettered.
func (db *DB) Redrive(ctx context.Context, key string) error {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	return shared.Redrive(key, describe, func() (int64, error) {
		r, err := db.admin.ExecContext(ctx, redriveSQL, sql.Named("key", key))
		if err != nil {
			return 0, err
		}
		return r.RowsAffected()
	}, func() (engine.RetryState, error) { return db.RetryState(ctx, key) }, sql.ErrNoRows)
}

// RetryState reads what failed attempts left on message key's row (engine.RetryReader).
func (db *DB) RetryState(ctx context.Context, key string) (engine.RetryState, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	var st engine.RetryState
	var next, lastErr sql.NullString
	err := db.admin.QueryRowContext(ctx, `SELECT Status, Attempts, NextAttemptUtc, LastError
  FROM OutboxMessages WHERE IdempotencyKey = :key`, sql.Named("key", key)).Scan(&st.Status, &st.Attempts, &next, &lastErr)
	if err != nil {
		return engine.RetryState{}, fmt.Errorf("retry state %s: %w", key, describe(err))
	}
	st.NextAttempt, _ = ParseTime(next.String)
	st.LastError = lastErr.String
	return st, nil
}

// retryStatesSQL reads RetryState's columns of every message, in Id order.
const retryStatesSQL = `SELECT Status, Attempts, NextAttemptUtc, LastError FROM OutboxMessages ORDER BY Id`

// RetryStates reads the RetryState of every message, in Id order, in one read statement
// (explore.RetryColumns: the columns a state key needs that engine.Row leaves out).
func (db *DB) RetryStates(ctx context.Context) ([]engine.RetryState, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	rows, err := db.query(ctx, retryStatesSQL)
	if err != nil {
		return nil, fmt.Errorf("retry states: %w", describe(err))
	}
	var out []engine.RetryState
	for rows.Next() {
		var st engine.RetryState
		var next, lastErr sql.NullString
		if err = rows.Scan(&st.Status, &st.Attempts, &next, &lastErr); err != nil {
			break
		}
		if st.NextAttempt, err = ParseTime(next.String); err != nil {
			break
		}
		st.LastError = lastErr.String
		out = append(out, st)
	}
	if err = errors.Join(err, rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("retry states: %w", describe(err))
	}
	return out, nil
}

// A worker connection is the rescuer's too.
var _ engine.RescueConn = (*Conn)(nil)
