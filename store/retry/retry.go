// Package retry is the rest of a message's life as both stores (SQLite, PostgreSQL) write it,
// from schema 4 on: a failed attempt that releases its lease (to Pending, claimable again after
// a backoff, or to DeadLettered once the attempts reach a maximum), the claim that honours the
// backoff, the redrive of a dead letter, and the rescue of an expired lease, guarded or not.
//
// It holds the requests, results and interfaces only; the SQL is each store's. The engine does
// not use it yet (issue 20): these are the store's seams for the lessons to come. The rescue's
// types are the engine's (engine.RescueConn, engine.Expired, engine.RescueRequest), which the
// rescuer actor uses.
package retry

import (
	"context"
	"errors"
	"time"

	"leaselab/engine"
)

// StatusDeadLettered is a message parked after its last allowed attempt failed: never claimed
// again, until a redrive. Like a processed row it has a ProcessedAtUtc (the moment it was
// parked), so that it is out of every claim's way.
const StatusDeadLettered = "DeadLettered"

// FailRequest is a worker's report that its attempt at Message failed. It is guarded as a
// fenced finalize is: it changes the row only while the row is Processing, held by Worker under
// Message.LeaseVersion.
type FailRequest struct {
	Worker  string
	Message engine.Message // as claimed: ID, IdempotencyKey and LeaseVersion are used
	Now     time.Time
	// NextAttempt is when the message may be claimed again; the zero time means at once.
	NextAttempt time.Time
	// Error is what the attempt failed with, kept as the row's LastError.
	Error string
	// MaxAttempts dead-letters the message when its Attempts (the claims that took it, this one
	// included) have reached it; 0 means no limit.
	MaxAttempts int64
}

// FailResult is what a failed attempt did.
type FailResult struct {
	// Released is true when the guard held: the lease is given up, the row is Pending (or
	// DeadLettered) with the error recorded. False: the row was not (or no longer) the worker's,
	// and nothing changed.
	Released bool
	// DeadLettered is true when the release parked the message for good.
	DeadLettered bool
	// Attempts is the row's attempt count (claims that took it) when it was released.
	Attempts int64
	// At is the time the release was written with.
	At time.Time
}

// ErrNotDeadLettered refuses a redrive of a message that is not dead-lettered.
var ErrNotDeadLettered = errors.New("not dead-lettered")

// Conn is a worker connection of a store from schema 4: an engine.Conn, and the rest.
type Conn interface {
	engine.Conn
	// Fail releases the worker's lease after a failed attempt (FailRequest).
	Fail(ctx context.Context, req FailRequest) (FailResult, error)
	// ClaimDue is the claim that honours NextAttemptUtc: a Pending row is claimable only from
	// its next attempt on. It takes no keyed request. With nothing to take it is Blocked by the
	// lease or the backoff that ends first (PrevUntil; PrevOwner empty for a backoff), or Empty.
	ClaimDue(ctx context.Context, req engine.ClaimRequest) (engine.ClaimResult, error)
	// Expired and Rescue are the rescuer's read and write (engine.RescueConn).
	engine.RescueConn
}

// Redriver is a store that can redrive a dead letter.
type Redriver interface {
	// Redrive moves the dead-lettered message key back to Pending, claimable at once, with its
	// attempts reset (its LastError and lease version are kept). A message that is not
	// dead-lettered is refused with ErrNotDeadLettered and nothing changes.
	Redrive(ctx context.Context, key string) error
}

// State is what failed attempts leave on a message's row.
type State struct {
	Status      string
	Attempts    int64
	NextAttempt time.Time // zero when none is set
	LastError   string
}

// Reader is a store that can read a message's State.
type Reader interface {
	// RetryState reads the State of message key.
	RetryState(ctx context.Context, key string) (State, error)
}
