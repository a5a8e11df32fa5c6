// Package engine is leaselab's outbox-leasing engine: the scenario clock, the fake payment
// provider and gateway, workers as state machines whose every action is one transaction or one
// provider call, the ledgers, the safety checks and the verdict.
//
// The engine speaks no SQL and imports no UI. It declares the small storage interfaces it needs
// (DB and Conn, below); package store implements them on SQLite, package store/postgres on
// PostgreSQL, and main wires one of them in. Its rooms are packages of their own that import
// it: the scenario language (engine/scenario), a run in words (engine/words) and the stress
// harness (engine/stress). Real time, where the engine needs any, comes through an injected Wall.
//
// # Time in a request: fixed, or read by the store inside the transaction
//
// Every request that writes a time (ClaimRequest, TakeRequest, RenewRequest, FinalizeRequest)
// carries it in one of two ways, and every backend (SQLite in package store, and any other) must
// honour both exactly as follows.
//
//   - Fixed times (Clock nil): the scenario clock. The store writes Now and Until as given, to
//     the millisecond. Scripted lessons depend on it: their times are part of what they teach.
//   - A wall clock (Clock set, with Lease for the requests that set a lease): worker processes
//     that share a database. The store ignores Now and Until. It calls the request's Times (or
//     Time) method exactly once per request, inside its transaction, after the transaction
//     holds every lock it will wait for, and before its first statement that uses the time;
//     every statement for that request then uses that one reading. On SQLite that is right after BEGIN
//     IMMEDIATE returned (after the FairWriteLock queue, if any): the wait for the write lock,
//     up to busy_timeout, is then behind it. A backend that locks rows instead (PostgreSQL)
//     reads it after its last statement that can wait for a lock: for a claim, the candidate is
//     picked with FOR UPDATE SKIP LOCKED, which does not wait, so the clock is read just before
//     that statement; a finalize or renew that takes its row with a waiting FOR UPDATE reads it
//     after that lock is granted, and its guarded UPDATE then uses it.
//
// Times is, with a clock: now = the reading truncated to the millisecond (so another worker's
// lease is judged expired no sooner than it is), and until = reading + Lease rounded up to the
// millisecond (so the lease granted is never shorter than Lease from the moment the lock was
// held). The result reports the time used (ClaimResult.At, TakeResult.At, RenewResult.At,
// FinalizeResult.At, and the lease end in Message.LockedUntil or RenewResult.Until): that is
// when the action took effect, which is what a worker prints and schedules from. With fixed
// times it is the request's Now. The time never comes from the database's own clock.
//
// Why: a worker that reads the wall clock before BEGIN IMMEDIATE and then waits 3 s for the
// write lock writes a lease that ended before its claim committed, and another worker may
// reclaim the message at once.
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
	// NextAttempt is the row's NextAttemptUtc: after a failed attempt with backoff, the row is
	// not claimable before it; zero when NULL.
	NextAttempt   time.Time
	PaymentStatus string
	TransactionID string // "" when NULL
	Amount        int64  // minor units (cents)
	// RowLock is, on a database with row locks (PostgreSQL), the connection whose open
	// transaction holds this row's lock right now, as the server names it; "" when none, and
	// always on SQLite. No column shows it: it is the server's, not the row's.
	RowLock string
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
	// ClaimLost: a lost race. The claim found a claimable row (Blocker), but another claim
	// took it between this claim's read and its write; PrevOwner is the winner when known.
	// Nothing was taken, and the caller may claim again at once.
	ClaimLost
)

func (o ClaimOutcome) String() string {
	switch o {
	case ClaimWon:
		return OutcomeWon
	case ClaimEmpty:
		return OutcomeEmpty
	case ClaimBlocked:
		return OutcomeBlocked
	case ClaimLost:
		return OutcomeLostRace
	}
	return "unknown"
}

// waitsForBackoff reports whether a blocked claim found work only waiting for its backoff:
// ClaimDue's blocker is then a Pending row, with no owner and its NextAttemptUtc as PrevUntil.
func (r ClaimResult) waitsForBackoff() bool {
	return r.Outcome == ClaimBlocked && r.PrevOwner == "" && !r.PrevUntil.IsZero()
}

// requestTimes is a request's Times: its fixed now and until, or with a clock one reading of it.
func requestTimes(now, until time.Time, clock func() time.Time, lease time.Duration) (time.Time, time.Time) {
	if clock == nil {
		return now, until
	}
	return wallTimes(clock, lease)
}

// wallTimes is Times for a request with a clock: one reading, now truncated and the lease end
// rounded up to the millisecond, as stored.
func wallTimes(clock func() time.Time, lease time.Duration) (now, until time.Time) {
	t := clock().UTC()
	now = t.Truncate(time.Millisecond)
	until = t.Add(lease)
	if r := until.Truncate(time.Millisecond); !r.Equal(until) {
		until = r.Add(time.Millisecond)
	}
	return now, until
}

// ClaimRequest asks for the oldest claimable message, or for the one with Key when Key is set.
// Its times follow the package documentation, "Time in a request".
type ClaimRequest struct {
	Worker string
	Now    time.Time // fixed: the time the claim judges expiry by (a lease is live up to Until)
	Until  time.Time // fixed: the lease end the claim writes
	Key    string
	// Clock, when set, replaces Now and Until: the store reads it once inside the transaction,
	// after the lock, and writes the reading + Lease as the lease end.
	Clock func() time.Time
	Lease time.Duration
	// WaitForLocks (skip-locked off) makes the claim wait for a row another transaction has
	// locked instead of passing over it, for up to LockTimeout; only a backend with row locks
	// (PostgreSQL) has the choice. SQLite's claim waits for its one write lock either way.
	WaitForLocks bool
	LockTimeout  time.Duration
}

// Times is the claim's now and lease end: Now and Until, or with Clock one reading of it (see
// the package documentation, "Time in a request"). A store calls it once per request, inside the transaction, after the lock is held.
func (r ClaimRequest) Times() (now, until time.Time) {
	return requestTimes(r.Now, r.Until, r.Clock, r.Lease)
}

// ClaimResult is what a claim transaction saw and did.
type ClaimResult struct {
	Outcome ClaimOutcome
	Message Message // set when Outcome is ClaimWon; its LockedUntil is the lease end written
	// At is the now the claim used (ClaimRequest.Times), whatever its outcome.
	At time.Time
	// PrevOwner and PrevUntil describe the lease the claim replaced (reclaim) or was blocked by.
	PrevOwner string
	PrevUntil time.Time
	// Blocker names the row a blocked claim was stopped by.
	Blocker string
	// LockWait is how long a claim that waited for another transaction's row lock waited
	// (ClaimRequest.WaitForLocks), measured; zero when it did not wait for one. LockHolder is
	// the transaction that held the lock, as the database names its connection ("" if unknown).
	LockWait   time.Duration
	LockHolder string
	// WaitedFor is the row the claim waited for (a claim that then won took the next one).
	WaitedFor string
}

// RowLocker is a Conn whose database locks rows (PostgreSQL). It can run the atomic claim in
// two steps with its transaction open between them, so that a lesson can show what another
// worker's claim does when it meets the row lock. SQLite's connections do not implement it:
// SQLite has one write lock and no row locks.
type RowLocker interface {
	// LockClaim begins the claim's transaction and locks the oldest claimable row (SELECT …
	// FOR UPDATE, SKIP LOCKED unless req.WaitForLocks); nothing is written. ClaimWon: the row
	// is locked, Message is the row as read (LeaseVersion the version seen), and the
	// transaction stays open until FinishClaim, or Close, which rolls it back. ClaimEmpty or
	// ClaimBlocked: nothing was locked and the transaction has ended.
	LockClaim(ctx context.Context, req ClaimRequest) (ClaimResult, error)
	// FinishClaim takes the row LockClaim locked with the claim's conditional UPDATE, and
	// commits. Times: req.Times once (the lock is held already).
	FinishClaim(ctx context.Context, req ClaimRequest) (ClaimResult, error)
}

// LeaseTimes are the times of a request that writes a lease end, as the package documentation,
// "Time in a request", describes them: fixed Now and Until, or a Clock the store reads once.
type LeaseTimes struct {
	Now   time.Time // fixed: the now the request reports (its result's At)
	Until time.Time // fixed: the lease end written
	// Clock, when set, replaces Now and Until: the store reads it once inside the transaction,
	// after the lock, and writes the reading + Lease as the lease end.
	Clock func() time.Time
	Lease time.Duration
}

// Times is the request's now and lease end, as ClaimRequest.Times.
func (lt LeaseTimes) Times() (now, until time.Time) {
	return requestTimes(lt.Now, lt.Until, lt.Clock, lt.Lease)
}

// TakeRequest is the second half of the non-atomic claim: set a lease on row ID with no
// condition, at its LeaseTimes.
type TakeRequest struct {
	ID     int64
	Worker string
	LeaseTimes
	// WaitForLocks and LockTimeout bound, on a backend with row locks (PostgreSQL), the take's
	// wait for a row another transaction holds locked (an open claim's locking read), as a
	// claim's are bounded: with WaitForLocks off (skip-locked on) the take does not wait; on, up
	// to LockTimeout. A take that meets the lock so takes nothing (TakeResult.Blocked). SQLite
	// has no row locks: there they change nothing.
	WaitForLocks bool
	LockTimeout  time.Duration
}

// TakeResult is what an unconditional take wrote.
type TakeResult struct {
	Message Message   // LockedUntil: the lease end written
	At      time.Time // the now the take used
	// Blocked: another transaction held the row locked and the take gave up, without waiting
	// (WaitForLocks off) or after LockWait; nothing was written.
	Blocked  bool
	LockWait time.Duration
}

// RenewRequest extends a lease the worker still holds (a heartbeat): UPDATE … SET
// LockedUntilUtc WHERE Id, Status='Processing', LockedBy=Worker and LeaseVersion all still
// match Message, to the lease end of its LeaseTimes.
type RenewRequest struct {
	Worker  string
	Message Message
	LeaseTimes
}

// RenewResult is what a renewal did.
type RenewResult struct {
	Renewed bool      // false: the worker no longer holds the lease (0 rows affected)
	At      time.Time // the now the renewal used
	Until   time.Time // the lease end written (when Renewed)
}

// FinalizeRequest writes a provider outcome: the payment and the outbox row in one transaction.
// Its time (ProcessedAtUtc) follows the package documentation, "Time in a request".
type FinalizeRequest struct {
	Worker         string
	Message        Message
	Now            time.Time // fixed: ProcessedAtUtc
	PaymentStatus  string    // PaymentPaid or PaymentFailed
	TransactionID  string    // "" unless Paid
	OwnershipCheck bool      // add "AND Status='Processing' AND LockedBy=?"
	Fencing        bool      // add "AND LeaseVersion=?"
	// Clock, when set, replaces Now: read once inside the transaction, after the lock.
	Clock func() time.Time
}

// Time is the finalize's ProcessedAtUtc: Now, or one reading of Clock truncated to the
// millisecond. A store calls it once per request, inside the transaction, after the lock is held.
func (r FinalizeRequest) Time() time.Time {
	if r.Clock == nil {
		return r.Now
	}
	now, _ := wallTimes(r.Clock, 0)
	return now
}

// FinalizeResult is what a finalize transaction saw and did. The Prior fields are the row just
// before the write, inside the same transaction, so they are exact: read from the row when there
// was no guard or the guarded UPDATE changed nothing; when the guard held, what it proved
// (Processing, owned by the worker) and the LeaseVersion the UPDATE returned.
type FinalizeResult struct {
	Committed    bool      // false: rolled back because the guarded UPDATE changed no row
	RowsAffected int64     // of the outbox UPDATE
	At           time.Time // the ProcessedAtUtc the finalize used (FinalizeRequest.Time)
	PriorStatus  string
	PriorOwner   string
	PriorVersion int64
}

// Counts are the database figures the checks need.
type Counts struct {
	Messages         int
	OutboxPending    int
	OutboxProcessing int
	OutboxProcessed  int
	// OutboxDeadLettered are the messages parked after their last allowed attempt: finished
	// without an outcome, counted apart from the processed and the lost.
	OutboxDeadLettered int
	PaymentsPending    int
	PaymentsPaid       int
	PaymentsFailed     int
	PaidWithTxID       int
	FailedWithTxID     int
	MaxPaymentsPerKey  int
	MaxOutboxPerKey    int
	DuplicateRows      int // rows beyond the first per key, in Payments and OutboxMessages
}

// Conn is one worker's own database connection, as a separate application instance would have.
// Each method is exactly one transaction.
//
// Lost races. Another worker's transaction may commit between what a method reads and what it
// writes: SQLite's BEGIN IMMEDIATE excludes that (one writer at a time), PostgreSQL under READ
// COMMITTED does not (a compare-and-set then finds the row changed and updates nothing). Every
// backend reports a lost race as an outcome, never as an error and never as a success:
//   - Claim: ClaimLost (Blocker the row, PrevOwner the winner when known) when the row it
//     found was taken by another claim meanwhile; ClaimBlocked only when every candidate is
//     under another live lease (Blocker and PrevOwner its owner, PrevUntil its end); ClaimEmpty
//     when no unfinished row is left; never ClaimWon for a row another connection took. The
//     caller may claim again.
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
	// on PostgreSQL: FOR UPDATE SKIP LOCKED). Times as the package documentation says ("Time in
	// a request"): req.Times once, after the lock.
	Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error)
	// SelectCandidate is the first half of a non-atomic claim: a plain read of the oldest
	// claimable row, in its own transaction.
	SelectCandidate(ctx context.Context, now time.Time) (Message, bool, error)
	// TakeUnconditional is the second half of a non-atomic claim: UPDATE … WHERE Id=? with no
	// condition on status or lease. Times: req.Times once, after the lock.
	TakeUnconditional(ctx context.Context, req TakeRequest) (TakeResult, error)
	// Renew extends a lease the caller still holds (heartbeat); Renewed false when it no
	// longer does. Times: req.Times once, after the lock.
	Renew(ctx context.Context, req RenewRequest) (RenewResult, error)
	// Finalize writes the payment outcome and marks the message Processed, in one transaction.
	// Time: req.Time once, after the lock.
	Finalize(ctx context.Context, req FinalizeRequest) (FinalizeResult, error)
	// Fail releases the worker's lease after a failed attempt (FailRequest, retry.go), guarded
	// by owner and lease version: Released false when the row was no longer the worker's.
	Fail(ctx context.Context, req FailRequest) (FailResult, error)
	// ClaimDue is the claim that honours NextAttemptUtc: a Pending row is claimable only from
	// its next attempt on. It takes no keyed request. With nothing to take it is Blocked by the
	// lease or the backoff that ends first (PrevUntil; PrevOwner empty for a backoff), or Empty.
	ClaimDue(ctx context.Context, req ClaimRequest) (ClaimResult, error)
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
	// EachRow calls fn with the rows Snapshot reads, one at a time, holding none of them: a
	// check of a large run reads its rows this way. An error from fn ends the read.
	EachRow(ctx context.Context, fn func(Row) error) error
	// EachTransactionID calls fn with every payment's key and TransactionId ("" when NULL), one
	// at a time. An error from fn ends the read.
	EachTransactionID(ctx context.Context, fn func(key, id string) error) error
	// Counts reads the figures the checks need.
	Counts(ctx context.Context) (Counts, error)
	// Path names the database for the screen and the report: the file's absolute path, or a
	// server URL without its password (and with the schema). Never a secret.
	Path() string
	// Capabilities is what this database and its connections can do beyond DB and Conn.
	Capabilities() Capabilities
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
