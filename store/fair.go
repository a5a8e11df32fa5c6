package store

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"leaselab/engine"
)

// SQLite's write lock is not fair. A connection that finds it taken sleeps in the busy handler
// (1, 2, 5, 10 … 100 ms, then 100 ms again and again), and the connection that just committed
// takes the lock back at once, while the sleepers are still asleep. With several workers on
// separate connections, some wait for over a second and some do no work at all; a worker that
// waits past its lease loses its message to another.
//
// The write-lock queue below fixes this for the connections of one process: workers take turns
// in the order they asked (a hand-over, no sleeping), and only then run BEGIN IMMEDIATE. It
// cannot help separate processes, which do not share the queue: between processes SQLite's busy
// handler still decides, as before.

// Options tune a DB. The zero value is SQLite's own behaviour, as the lesson shows it.
type Options struct {
	// FairWriteLock makes the worker connections of this DB (those from Connect, in this
	// process) take turns for SQLite's write lock in the order they asked for it; a turn lasts
	// up to 2 ms of back-to-back transactions. It changes who waits how long, not what a
	// transaction does: every transaction is still BEGIN IMMEDIATE on the worker's own
	// connection, with busy_timeout for connections of other processes.
	FairWriteLock bool
	// Reset lets CreateWith empty a database that holds rows (the user's --reset): see MayReset.
	Reset bool
}

// CreateWith is Create with options. Unlike Create, it empties a database that holds rows only
// with opts.Reset: without, it refuses one (ErrHoldsRows) and changes nothing.
func CreateWith(ctx context.Context, path string, opts Options) (*DB, error) {
	db, err := create(ctx, path, opts.Reset)
	if err != nil {
		return nil, err
	}
	db.apply(opts)
	return db, nil
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opts Options) (*DB, error) {
	db, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	db.apply(opts)
	return db, nil
}

func (db *DB) apply(opts Options) {
	if opts.FairWriteLock {
		db.gate = newWriteGate(fairTurn, fairGrace)
	}
}

// The fair queue's turn: the connection whose turn it is may run transactions back to back for
// up to fairTurn while others wait, if it comes back for the next one within fairGrace. Handing
// the lock to another connection costs that connection its page cache (SQLite drops it when
// another connection has written) and a goroutine wake-up on another CPU: one transaction per
// turn costs up to half the throughput, a 2 ms turn almost nothing. With 8 workers, a wait is
// then about 7 turns at most.
const (
	fairTurn  = 2 * time.Millisecond
	fairGrace = 50 * time.Microsecond
)

// writeGate is the write-lock queue. The connection whose turn it is (the owner) runs its
// transactions one after another for up to turn; connections that ask meanwhile wait in arrival
// order and get their turns in that order. A turn ends early when its owner has not come back
// for its next transaction within grace, so the lock never sits idle while others wait. With
// turn 0, every transaction is a turn of its own.
type writeGate struct {
	turn, grace time.Duration

	mu    sync.Mutex
	busy  bool          // the owner is inside a transaction
	owner *Conn         // whose turn it is (nil: nobody's yet)
	ends  time.Time     // when the owner's turn ends
	queue []*gateWaiter // connections waiting for a turn, in arrival order
	timer *time.Timer   // ends an idle owner's turn while others wait
	armed uint64        // generation of timer, so that a stale expiry does nothing
}

// gateWaiter is one connection waiting for its turn.
type gateWaiter struct {
	c     *Conn
	ready chan struct{} // closed when the turn is handed to c
}

func newWriteGate(turn, grace time.Duration) *writeGate {
	return &writeGate{turn: turn, grace: grace}
}

// enter waits for c's turn to run a transaction, at most BusyTimeout (as SQLite would) and never
// past ctx. Every enter that returns nil must be followed by leave(c).
func (g *writeGate) enter(ctx context.Context, c *Conn) error {
	g.mu.Lock()
	// Free with nobody waiting, or c's own turn goes on.
	if !g.busy && (len(g.queue) == 0 || g.owner == c && time.Now().Before(g.ends)) {
		if g.owner != c {
			g.owner, g.ends = c, time.Now().Add(g.turn)
		}
		g.busy = true
		g.mu.Unlock()
		return nil
	}
	w := &gateWaiter{c: c, ready: make(chan struct{})}
	g.queue = append(g.queue, w)
	g.mu.Unlock()

	timeout := time.NewTimer(BusyTimeout)
	defer timeout.Stop()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = fmt.Errorf("wait for the write lock: %w", ctx.Err())
	case <-timeout.C:
		err = fmt.Errorf("%w (queued %v for the write lock in this process)", engine.ErrBusy, BusyTimeout)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-w.ready: // the turn came as we gave up: pass it on
		g.busy = false
		if len(g.queue) > 0 {
			g.handOverLocked()
		}
	default:
		g.queue = slices.DeleteFunc(g.queue, func(x *gateWaiter) bool { return x == w })
	}
	return err
}

// leave ends c's transaction. When others wait, the turn passes to the first of them once c's
// turn is over, or once c has not come back within grace.
func (g *writeGate) leave(c *Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy = false
	if len(g.queue) == 0 {
		return
	}
	now := time.Now()
	if g.owner != c || !now.Before(g.ends) {
		g.handOverLocked()
		return
	}
	g.armed++
	gen := g.armed
	if g.timer != nil {
		g.timer.Stop()
	}
	g.timer = time.AfterFunc(min(g.ends.Sub(now), g.grace), func() { g.expire(gen) })
}

// expire ends the turn of an owner that has not come back in time.
func (g *writeGate) expire(gen uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gen == g.armed && !g.busy && len(g.queue) > 0 {
		g.handOverLocked()
	}
}

// handOverLocked gives the turn to the first waiter.
func (g *writeGate) handOverLocked() {
	w := g.queue[0]
	g.queue[0] = nil
	g.queue = g.queue[1:]
	g.owner, g.ends, g.busy = w.c, time.Now().Add(g.turn), true
	g.armed++ // a pending expiry belongs to the old turn
	close(w.ready)
}
