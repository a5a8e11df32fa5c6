// Package engine is leaselab's outbox-leasing engine: the scenario clock, the fake payment
// provider and gateway, workers as state machines whose every action is one transaction or one
// provider call, the ledgers, the safety checks and the verdict.
//
// The engine speaks no SQL and imports no UI. It declares the small storage interfaces it needs
// (DB and Conn, below); package store implements them on SQLite, package store/postgres on
// PostgreSQL, and main wires one of them in.
package engine

import (
	"context"
	"errors"
	"time"
)

// Message statuses, as stored in OutboxMessages.Status.
const (
	StatusPending    = "Pending"
	StatusProcessing = "Processing"
	StatusProcessed  = "Processed"
)

// Payment statuses, as stored in Payments.PaymentStatus.
const (
	PaymentPending = "Pending"
	PaymentPaid    = "Paid"
	PaymentFailed  = "Failed"
)

// MessageType is the Type of every outbox row the gateway writes.
const MessageType = "PaymentStatusCheckRequested"

// Message is what a worker holds in memory after a load or a claim: a copy of one outbox row
// as it was when read. It may be stale a moment later; that is the lesson.
type Message struct {
	ID             int64
	IdempotencyKey string
	Type           string
	Payload        string
	// LeaseVersion is the version this worker's claim set (0 when loaded without a claim).
	LeaseVersion int64
	// LockedUntil is the lease end this worker's claim set (zero when not claimed).
	LockedUntil time.Time
}

// Row is one outbox row joined with its payment, as the database holds it now.
type Row struct {
	ID             int64
	IdempotencyKey string
	Status         string
	CreatedAt      time.Time
	ProcessedAt    time.Time // zero when NULL
	LockedBy       string    // "" when NULL
	LockedUntil    time.Time // zero when NULL
	Attempts       int64
	LeaseVersion   int64
	PaymentStatus  string
	TransactionID  string // "" when NULL
	Amount         int64  // minor units (cents)
}

// ClaimOutcome says how a claim ended.
type ClaimOutcome int

const (
	// ClaimWon: the conditional UPDATE changed exactly one row; the caller owns it until
	// LockedUntil.
	ClaimWon ClaimOutcome = iota
	// ClaimEmpty: nothing is left to do (no Pending row, no Processing row).
	ClaimEmpty
	// ClaimBlocked: work remains but every candidate is under another live lease.
	ClaimBlocked
)

func (o ClaimOutcome) String() string {
	switch o {
	case ClaimWon:
		return OutcomeWon
	case ClaimEmpty:
		return OutcomeEmpty
	case ClaimBlocked:
		return OutcomeBlocked
	}
	return "unknown"
}

// ClaimRequest asks for the oldest claimable message, or for the one with Key when Key is set.
type ClaimRequest struct {
	Worker string
	Now    time.Time
	Until  time.Time
	Key    string
}

// ClaimResult is what a claim transaction saw and did.
type ClaimResult struct {
	Outcome ClaimOutcome
	Message Message // set when Outcome is ClaimWon
	// PrevOwner and PrevUntil describe the lease the claim replaced (reclaim) or was blocked by.
	PrevOwner string
	PrevUntil time.Time
	// Blocker names the row a blocked claim was stopped by.
	Blocker string
}

// FinalizeRequest writes a provider outcome: the payment and the outbox row in one transaction.
type FinalizeRequest struct {
	Worker         string
	Message        Message
	Now            time.Time
	PaymentStatus  string // PaymentPaid or PaymentFailed
	TransactionID  string // "" unless Paid
	OwnershipCheck bool   // add "AND Status='Processing' AND LockedBy=?"
	Fencing        bool   // add "AND LeaseVersion=?"
}

// FinalizeResult is what a finalize transaction saw and did. The Prior fields are the row just
// before the write, inside the same transaction, so they are exact: read from the row when there
// was no guard or the guarded UPDATE changed nothing; when the guard held, what it proved
// (Processing, owned by the worker) and the LeaseVersion the UPDATE returned.
type FinalizeResult struct {
	Committed    bool  // false: rolled back because the guarded UPDATE changed no row
	RowsAffected int64 // of the outbox UPDATE
	PriorStatus  string
	PriorOwner   string
	PriorVersion int64
}

// Counts are the database figures the checks need.
type Counts struct {
	Messages          int
	OutboxPending     int
	OutboxProcessing  int
	OutboxProcessed   int
	PaymentsPending   int
	PaymentsPaid      int
	PaymentsFailed    int
	PaidWithTxID      int
	FailedWithTxID    int
	MaxPaymentsPerKey int
	MaxOutboxPerKey   int
	DuplicateRows     int // rows beyond the first per key, in Payments and OutboxMessages
	// TransactionIDs maps each key to the TransactionId the database holds ("" when NULL).
	TransactionIDs map[string]string
}

// Conn is one worker's own database connection, as a separate application instance would have.
// Each method is exactly one transaction.
//
// Lost races. Another worker's transaction may commit between what a method reads and what it
// writes: SQLite's BEGIN IMMEDIATE excludes that (one writer at a time), PostgreSQL under READ
// COMMITTED does not (a compare-and-set then finds the row changed and updates nothing). Every
// backend reports a lost race as an outcome, never as an error and never as a success:
//   - Claim: ClaimBlocked (Blocker and PrevOwner name what it lost to when known), or
//     ClaimEmpty when no unfinished row is left; never ClaimWon for a row another connection
//     took. The caller may claim again.
//   - Renew: false, nothing changed.
//   - Finalize with OwnershipCheck: Committed false, RowsAffected 0, the payment update rolled
//     back with the rest; the Prior fields are the row as the winner left it.
//
// An error wrapping ErrBusy means the database gave up on the transaction (a lock not had in
// time, a deadlock, a serialization failure): nothing was changed and the action can be retried.
type Conn interface {
	// LoadPending is the naive worker's bulk read: SELECT … WHERE Status='Pending'.
	LoadPending(ctx context.Context) ([]Message, error)
	// Claim is the atomic claim: one transaction that finds the oldest claimable candidate (or
	// the one named by Key) and takes it with a conditional UPDATE (on SQLite: BEGIN IMMEDIATE;
	// on PostgreSQL: FOR UPDATE SKIP LOCKED).
	Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error)
	// SelectCandidate is the first half of a non-atomic claim: a plain read of the oldest
	// claimable row, in its own transaction.
	SelectCandidate(ctx context.Context, now time.Time) (Message, bool, error)
	// TakeUnconditional is the second half of a non-atomic claim: UPDATE … WHERE Id=? with no
	// condition on status or lease.
	TakeUnconditional(ctx context.Context, id int64, worker string, until time.Time) (Message, error)
	// Renew extends a lease the caller still holds (heartbeat); false when it no longer does.
	Renew(ctx context.Context, msg Message, worker string, until time.Time) (bool, error)
	// Finalize writes the payment outcome and marks the message Processed, in one transaction.
	Finalize(ctx context.Context, req FinalizeRequest) (FinalizeResult, error)
	// Close closes the connection. A crashed worker's rows stay as they are.
	Close() error
}

// DB is the shared database: it hands out worker connections and answers the screen and the
// checks.
type DB interface {
	// Connect opens a new, separate connection for one worker.
	Connect(ctx context.Context) (Conn, error)
	// CreatePayment writes a Pending payment and its Pending outbox row in one transaction.
	CreatePayment(ctx context.Context, p NewPayment) error
	// Snapshot reads every outbox row with its payment, ordered by Id.
	Snapshot(ctx context.Context) ([]Row, error)
	// Counts reads the figures the checks need.
	Counts(ctx context.Context) (Counts, error)
	// Path names the database for the screen and the report: the file's absolute path, or a
	// server URL without its password (and with the schema). Never a secret.
	Path() string
}

// NewPayment is one payment to create, with its outbox message.
type NewPayment struct {
	Key       string
	Amount    int64
	CreatedAt time.Time
	Payload   string
}

// ErrBusy is returned (wrapped) by a store when the database gave up on a transaction: SQLite's
// write lock could not be had within busy_timeout, or PostgreSQL hit its lock_timeout, a deadlock
// or a serialization failure. Nothing was changed and the action can be retried.
var ErrBusy = errors.New("database is busy")
