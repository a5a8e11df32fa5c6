package store

import (
	"context"
	"time"
)

// finalizeHold is fault injection for crash tests: it keeps every finalize transaction open,
// after the payment update and before the outbox update, so that a test can kill the process
// in the middle of a write transaction.
type finalizeHold struct {
	d      time.Duration
	notify func(key string)
}

// HoldFinalize makes every finalize transaction of connections opened afterwards wait d inside
// the transaction (holding SQLite's write lock), calling notify first. It is for crash tests
// (leaselab worker --hold-finalize), never for normal runs.
func (db *DB) HoldFinalize(d time.Duration, notify func(key string)) {
	db.hold = &finalizeHold{d: d, notify: notify}
}

// wait holds the transaction; a nil hold does nothing. It returns ctx's error if ctx ends first:
// the finalize then rolls back.
func (h *finalizeHold) wait(ctx context.Context, key string) error {
	if h == nil {
		return nil
	}
	if h.notify != nil {
		h.notify(key)
	}
	t := time.NewTimer(h.d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
