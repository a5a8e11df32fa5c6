package engine

import (
	"context"
	"sync/atomic"
	"time"
)

// Epoch is where every scenario clock starts: 09:00:00.000Z on a fixed date.
var Epoch = time.Date(2026, time.January, 15, 9, 0, 0, 0, time.UTC)

// Clock is the scenario clock. It moves only when told, so lease expiry needs no real waiting
// and every run is repeatable. It is safe for concurrent use.
type Clock struct {
	ms   atomic.Int64     // milliseconds since the Unix epoch
	wall func() time.Time // when set, Now follows it and the clock cannot be moved
}

// NewWallClock returns a clock that follows now (time.Now for worker processes that share one
// database: separate processes have no scenario clock in common, only the wall clock).
func NewWallClock(now func() time.Time) *Clock { return &Clock{wall: now} }

// Follows reports whether the clock follows the wall clock (and so cannot be moved).
func (c *Clock) Follows() bool { return c.wall != nil }

// newClock returns a clock standing at start.
func newClock(start time.Time) *Clock {
	c := &Clock{}
	c.Set(start)
	return c
}

// Now is the scenario time.
func (c *Clock) Now() time.Time {
	if c.wall != nil {
		return time.UnixMilli(c.wall().UnixMilli()).UTC()
	}
	return time.UnixMilli(c.ms.Load()).UTC()
}

// Set moves the clock to t (millisecond precision, as stored).
func (c *Clock) Set(t time.Time) { c.ms.Store(t.UnixMilli()) }

// Advance moves the clock forward by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	return time.UnixMilli(c.ms.Add(d.Milliseconds())).UTC()
}

// FormatClock shows a scenario time as the lesson does: 09:00:00.600Z.
func FormatClock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("15:04:05.000Z")
}

// Wall is real time, for what the engine does in real time rather than on the scenario clock:
// a stress run's elapsed time and its workers' pauses, a serving worker's pace and polls, a
// concurrent step's provider latency, a busy database's retry. Callers inject it
// (stress.Config.Wall, ServeOptions.Wall, SessionOptions.Sleep); SystemWall is the operating
// system's, the one place the engine reads time.Now or starts a timer of its own.
type Wall interface {
	Now() time.Time
	// After sends the time on the channel it returns once d has passed.
	After(d time.Duration) <-chan time.Time
}

// SystemWall is the operating system's clock and timers.
type SystemWall struct{}

// Now is the time of day.
func (SystemWall) Now() time.Time { return time.Now() }

// After is time.After.
func (SystemWall) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Sleep waits for d, or until ctx ends: SessionOptions.Sleep when none is given.
func (w SystemWall) Sleep(ctx context.Context, d time.Duration) { sleep(ctx, w, d) }

// sleep waits on w for d, or until ctx ends.
func sleep(ctx context.Context, w Wall, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-w.After(d):
	}
}
