package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// stepWall is a wall clock whose timers fire at once, moving its time on by their wait.
type stepWall struct{ now time.Time }

func (w *stepWall) Now() time.Time { return w.now }

func (w *stepWall) After(d time.Duration) <-chan time.Time {
	w.now = w.now.Add(d)
	c := make(chan time.Time, 1)
	c <- w.now
	return c
}

// The completer retries a transaction the database refuses as busy, and stops retrying after
// a lease: its context is never cancelled, so before the deadline a database that stayed busy
// kept the hosted worker retrying for ever. A busy answer that clears is retried to success.
func TestHostRetryBusyHasADeadline(t *testing.T) {
	busy := func() error { return ErrBusy }
	for _, c := range []struct {
		lease, poll time.Duration
		tries       int
		tx          func(try int) error
		wantErr     bool
	}{
		{lease: 2 * time.Second, poll: 100 * time.Millisecond, tries: 21, tx: func(int) error { return busy() }, wantErr: true},
		{lease: 10 * time.Millisecond, poll: 100 * time.Millisecond, tries: 11, tx: func(int) error { return busy() }, wantErr: true}, // at least a second
		{lease: 2 * time.Second, poll: 100 * time.Millisecond, tries: 4, tx: func(try int) error {
			if try < 4 {
				return busy()
			}
			return nil
		}},
	} {
		h := &host{opt: HostOptions{Lease: c.lease, Poll: c.poll, Wall: &stepWall{now: time.Unix(0, 0)}}}
		tries := 0
		err := h.retryBusy(context.Background(), func() error { tries++; return c.tx(tries) })
		if tries != c.tries || (err != nil) != c.wantErr || (c.wantErr && !errors.Is(err, ErrBusy)) {
			t.Errorf("lease %s: %d tries, err %v; want %d tries, an error %v", c.lease, tries, err, c.tries, c.wantErr)
		}
		if h.stats.BusyRetries != c.tries-1 {
			t.Errorf("lease %s: %d busy retries counted, want %d", c.lease, h.stats.BusyRetries, c.tries-1)
		}
	}
}
