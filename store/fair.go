package store

import (
	"context"
	"fmt"
	"time"

	"leaselab/engine"
)

// SQLite's write lock is not fair. A connection that finds it taken sleeps in the busy handler
// (1, 2, 5, 10 … 100 ms, then 100 ms again and again), and the connection that just committed
// takes the lock back at once, while the sleepers are still asleep. With several workers on
// separate connections, some wait for over a second and some do no work at all; a worker that
// waits past its lease loses its message to another.
//
// The write-lock queue below fixes this for the connections of one process: each worker's
// transaction waits for its turn in arrival order (a FIFO hand-over, no sleeping), and only then
// runs BEGIN IMMEDIATE. It cannot help separate processes, which do not share the queue: between
// processes SQLite's busy handler still decides, as before.

// Options tune a DB. The zero value is SQLite's own behaviour, as the lesson shows it.
type Options struct {
	// FairWriteLock makes the worker connections of this DB (those from Connect, in this
	// process) take SQLite's write lock in the order they asked for it. It changes who waits how
	// long, not what a transaction does: every transaction is still BEGIN IMMEDIATE on the
	// worker's own connection, with busy_timeout for connections of other processes.
	FairWriteLock bool
}

// CreateWith is Create with options.
func CreateWith(ctx context.Context, path string, opts Options) (*DB, error) {
	db, err := Create(ctx, path)
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
		db.gate = newWriteGate()
	}
}

// writeGate is the write-lock queue: a channel with one slot. A goroutine blocked on a send
// waits in the channel's FIFO queue, and a receive hands the slot straight to the first waiter,
// so the slot is never free while someone waits and a newcomer cannot jump the queue.
type writeGate struct {
	slot chan struct{}
}

func newWriteGate() *writeGate { return &writeGate{slot: make(chan struct{}, 1)} }

// enter waits for the caller's turn, at most BusyTimeout (as SQLite would) and never past ctx.
func (g *writeGate) enter(ctx context.Context) error {
	select {
	case g.slot <- struct{}{}:
		return nil
	default:
	}
	timer := time.NewTimer(BusyTimeout)
	defer timer.Stop()
	select {
	case g.slot <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the write lock: %w", ctx.Err())
	case <-timer.C:
		return fmt.Errorf("%w (queued %v for the write lock in this process)", engine.ErrBusy, BusyTimeout)
	}
}

// leave hands the slot to the next waiter, if any.
func (g *writeGate) leave() { <-g.slot }
