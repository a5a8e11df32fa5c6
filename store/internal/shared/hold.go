package shared

import (
	"context"
	"time"
)

// FinalizeHold is fault injection for crash tests: it keeps every finalize transaction open,
// after the payment update and before the outbox update, so that a test can kill the process
// in the middle of a write transaction.
type FinalizeHold struct {
	d      time.Duration
	notify func(key string)
}

// NewFinalizeHold holds every finalize for d, calling notify (if set) with the message's key
// first. Every backend's HoldFinalize uses it.
func NewFinalizeHold(d time.Duration, notify func(key string)) *FinalizeHold {
	return &FinalizeHold{d: d, notify: notify}
}

// Wait holds the transaction; a nil hold does nothing. It returns ctx's error if ctx ends first:
// the finalize then rolls back.
func (h *FinalizeHold) Wait(ctx context.Context, key string) error {
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
