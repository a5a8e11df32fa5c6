package engine

import (
	"context"
	"fmt"
	"time"
)

// The two-step claim of the skip-locked lesson: a worker's claim transaction stopped after its
// locking read, so that another worker's claim meets the row lock (PostgreSQL only).

// OutcomeLockReleased marks a crash inside an open claim transaction: the server rolled it
// back, releasing the row lock and leaving the row as it was.
const OutcomeLockReleased = "lock released"

// canLockLocked says whether a live, awake worker may take ActLock now: idle, with the atomic
// claim of leasing, over a connection whose database locks rows.
func (w *Worker) canLockLocked(next Action) error {
	if w.phase != phaseIdle || next != ActClaim { // Do has refused a paused or crashed worker already
		return fmt.Errorf("%s cannot lock now (its next action is %s; a lock is the first half of an atomic claim): %w", w.Name, next, ErrNotNow)
	}
	if !w.env.caps.RowLocks {
		return fmt.Errorf("%s cannot lock a row: this database has no row locks (SQLite takes one write lock for the whole file; a lock step needs PostgreSQL): %w", w.Name, ErrNotNow)
	}
	return nil
}

// lockClaim is the first half of a two-step claim: the row locked, the transaction left open.
func (w *Worker) lockClaim(ctx context.Context, s Settings, now time.Time) (Event, error) {
	res, err := w.conn.(RowLocker).LockClaim(ctx, w.claimRequest("", s, now))
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", w.Name, err)
	}
	if res.Outcome != ClaimWon {
		return w.claimed(res, ""), nil // nothing locked: the claim ended as a claim ends
	}
	w.held, w.leased, w.phase = res.Message, false, phaseLocked
	w.poll(true, time.Time{})
	return Event{Kind: EvLock, At: res.At, Key: res.Message.IdempotencyKey, Outcome: OutcomeLocked,
		Version: res.Message.LeaseVersion, SkipLocked: s.SkipLocked,
		Wait: res.LockWait, Holder: res.LockHolder, WaitedFor: res.WaitedFor}, nil
}

// finishClaim is the second half: the claim's conditional UPDATE and COMMIT on the locked row.
func (w *Worker) finishClaim(ctx context.Context, s Settings, now time.Time) (Event, error) {
	res, err := w.conn.(RowLocker).FinishClaim(ctx, w.claimRequest("", s, now))
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", w.Name, err)
	}
	w.phase, w.held = phaseIdle, Message{}
	return w.claimed(res, ""), nil
}
