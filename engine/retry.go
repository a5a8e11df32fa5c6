package engine

import (
	"context"
	"errors"
	"time"
)

// The rest of a message's life, as the engine asks the stores for it (issue 20): a failed
// attempt that releases its lease (to Pending, claimable again after a backoff, or to
// DeadLettered once the attempts reach a maximum), the claim that honours the backoff, and the
// redrive of a dead letter. The SQL is each store's; the types are the engine's, so that the
// store depends on the engine and never the other way.

// StatusDeadLettered is a message parked after its last allowed attempt failed: never claimed
// again, until a redrive. Like a processed row it has a ProcessedAtUtc (the moment it was
// parked), so that it is out of every claim's way.
const StatusDeadLettered = "DeadLettered"

// FailRequest is a worker's report that its attempt at Message failed. It is guarded as a
// fenced finalize is: it changes the row only while the row is Processing, held by Worker under
// Message.LeaseVersion.
type FailRequest struct {
	Worker  string
	Message Message // as claimed: ID, IdempotencyKey and LeaseVersion are used
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

// ErrNoSuchMessage refuses a redrive of a key the database has no message for.
var ErrNoSuchMessage = errors.New("no such message")

// Redriver is a store that can redrive a dead letter.
type Redriver interface {
	// Redrive moves the dead-lettered message key back to Pending, claimable at once, with its
	// attempts reset (its LastError and lease version are kept). A message that is not
	// dead-lettered is refused with ErrNotDeadLettered, a key with no message with
	// ErrNoSuchMessage, and nothing changes.
	Redrive(ctx context.Context, key string) error
}

// RetryState is what failed attempts leave on a message's row.
type RetryState struct {
	Status      string
	Attempts    int64
	NextAttempt time.Time // zero when none is set
	LastError   string
}

// RetryReader is a store that can read a message's RetryState.
type RetryReader interface {
	// RetryState reads the RetryState of message key.
	RetryState(ctx context.Context, key string) (RetryState, error)
}
