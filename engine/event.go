package engine

import (
	"fmt"
	"time"
)

// EventKind names what happened.
type EventKind string

// Event kinds.
const (
	// A poll and a claim: load (no leasing), an atomic claim, or the non-atomic SELECT, take and
	// the lock that ends it.
	EvLoad   EventKind = "load"
	EvClaim  EventKind = "claim"
	EvSelect EventKind = "select"
	EvTake   EventKind = "take"
	EvLock   EventKind = "lock"

	// A held message: the ownership check, a heartbeat, the finalize, or a failed attempt that
	// released its lease (worker_fail.go).
	EvCheck    EventKind = "check"
	EvRenew    EventKind = "renew"
	EvFinalize EventKind = "finalize"
	EvFail     EventKind = "fail"

	// A worker's life.
	EvCrash   EventKind = "crash"
	EvRestart EventKind = "restart"
	EvPause   EventKind = "pause"
	EvResume  EventKind = "resume"

	// The session's own: the clock, a setting, a heading and a sentence of the timeline.
	EvClock   EventKind = "clock"
	EvSetting EventKind = "setting"
	EvPhase   EventKind = "phase"
	EvNote    EventKind = "note"
)

// Event outcomes, as Event.Outcome carries them.
const (
	OutcomeWon       = "won"           // a claim took a row that was free
	OutcomeReclaimed = "reclaimed"     // a claim took a row over an expired lease
	OutcomeEmpty     = "empty"         // a claim or load found no work at all
	OutcomeBlocked   = "blocked"       // a claim found work, all under live leases
	OutcomeBackoff   = "backoff"       // a claim found work, all waiting for its backoff (NextAttemptUtc)
	OutcomeLostRace  = "lost-race"     // a claim's row was taken by another claim between its read and write
	OutcomeCommitted = "committed"     // a finalize wrote its outcome
	OutcomeRejected  = "rejected"      // a guarded finalize changed no row and rolled back
	OutcomeViolation = "violation"     // a finalize wrote without owning the row
	OutcomeLoaded    = "loaded"        // a naive load found rows
	OutcomeSelected  = "selected"      // a non-atomic claim read a candidate
	OutcomeTaken     = "taken"         // a non-atomic claim's unconditional UPDATE
	OutcomeLocked    = "locked"        // a two-step claim locked its row, transaction open
	OutcomeRenewed   = "renewed"       // a heartbeat extended the lease
	OutcomeLost      = "lost"          // a heartbeat found the lease gone
	OutcomeHolding   = "holding"       // a worker crashed holding a lease
	OutcomeExpired   = "expired"       // a wall-clock worker's lease ended before its provider call
	OutcomeError     = "error"         // a provider call failed: no answer (Event.Error says why)
	OutcomeReleased  = "released"      // a failed attempt gave its lease up: Pending, retried from Until
	OutcomeParked    = "dead-lettered" // a failed attempt parked its message: DeadLettered
)

// Event is one line of the timeline: one transaction, one provider call, or one thing done to a
// worker, the clock or the settings.
type Event struct {
	Seq     int
	At      time.Time // scenario time
	Kind    EventKind
	Worker  string    // "" for clock, settings, phases and notes
	Key     string    // the message, when there is one
	Outcome string    // won, empty, blocked, committed, rejected, violation, Paid, Failed, …
	Rows    int64     // rows affected, where a statement reports it
	Until   time.Time // the lease end a claim, take or renewal set, or that blocked a claim
	Version int64     // the lease version a claim or take set; a finalize, crash or wake-up: the one held
	Text    string    // the event in words, without the time: Sentence(e), set when recorded
	// What the words are made of, where the kind has it.
	ID           string        // the worker's LockedBy value (its worker id)
	Last         string        // a load: the last key of the range loaded (Key is the first)
	Holding      string        // a pause or a wake-up: the key the worker holds, "" when none
	PriorOwner   string        // a reclaim: the owner replaced; a block: the owner of the lease
	PriorUntil   time.Time     // a reclaim: the end of the lease it replaced
	PriorStatus  string        // a finalize: the row's Status just before the write
	PriorVersion int64         // a finalize: the row's LeaseVersion just before the write
	OwnerCheck   bool          // a finalize: guarded by Status='Processing' AND LockedBy
	Fenced       bool          // a finalize: guarded by LeaseVersion (Version: the one held)
	Payment      string        // a finalize: the payment status written
	TxID         string        // a provider answer's TransactionId, "" when none
	Due          time.Time     // a provider call: when its answer is due
	Error        string        // a provider call that failed, and the release after it: why
	Wait         time.Duration // a claim: how long it waited for a row lock (skip-locked off)
	Holder       string        // a claim that waited: whose transaction held the lock
	WaitedFor    string        // a claim that waited: the row whose lock it waited for
	SkipLocked   bool          // a lock: it passed over locked rows (SKIP LOCKED)
	// Trace is the SQL the action ran, as the database ran it, when the session traces
	// (Session.TraceSQL); nil otherwise, and for what is not a transaction.
	Trace *Trace
}

// String is the event as the log shows it: "09:00:00.000Z Worker-A claimed PAY-001, …".
func (e Event) String() string { return fmt.Sprintf("%s %s", FormatClock(e.At), e.Words()) }

// Words is the event in words, without the time: Text once recorded, else Sentence(e).
func (e Event) Words() string {
	if e.Text != "" {
		return e.Text
	}
	return Sentence(e)
}

// SetsLease reports whether the event granted or extended a lease (its Until).
func (e Event) SetsLease() bool {
	switch e.Kind {
	case EvClaim:
		return e.Outcome == OutcomeWon || e.Outcome == OutcomeReclaimed
	case EvTake:
		return true
	case EvRenew:
		return e.Outcome == OutcomeRenewed
	}
	return false
}
