package engine

import (
	"sync"
	"time"

	"leaselab/engine/internal/keyed"
)

// WorkerLedger counts what one worker did. Claim attempts and processing attempts are kept
// apart: a claim only acquires a lease; processing is the work (the provider call).
type WorkerLedger struct {
	Loads               int // naive bulk loads
	RowsLoaded          int // rows those loads returned
	ClaimsWon           int
	ClaimsEmpty         int
	ClaimsBlocked       int           // found work, all under another's live lease (or a row lock)
	ClaimsBackoff       int           // found work, all waiting for its backoff (NextAttemptUtc): no lease
	LockWaits           int           // claims that waited for another transaction's row lock (skip-locked off)
	LockWaited          time.Duration // how long those waits took, measured
	Reclaims            int           // claims won over an expired lease of another owner
	Selects             int           // non-atomic claim, first half
	Takes               int           // non-atomic claim, second half (unconditional UPDATE)
	ProcessingAttempts  int
	Finalized           int // finalize transactions committed
	RejectedFinalizes   int // guarded finalize changed no row and rolled back
	OwnershipViolations int // committed finalize on a row this attempt did not own
	Renewals            int
	LostRenewals        int // heartbeat found the lease gone
	BusyRetries         int // SQLITE_BUSY after busy_timeout; the action was retried
	Crashes             int
	Restarts            int
}

// Attempt is one processing attempt on a message.
type Attempt struct {
	Worker  string
	At      time.Time
	Version int64 // the lease version the attempt held (0 without a claim)
}

// Ledger holds every worker's ledger, what happened to each message and the event log. What it
// keeps per message is a fixed 32 bytes for the common message (messages.go), more only for a
// message processed or leased more than once; the event log keeps a bounded part of the events
// and counts all. Safe for concurrent use.
type Ledger struct {
	mu        sync.Mutex
	workers   map[string]*WorkerLedger
	msgs      *messages        // per message: attempts, commits, leases, violations
	committed int              // committed finalizes, all keys
	finished  int              // keys with at least one committed finalize
	log       eventLog         // the kept events (bounded) and the count of all
	recov     *recoveryTracker // crashes of owners and their reclaims, from every event
	// onRecord, when set, is called with each event once it is recorded, outside the lock
	// (Session.RecordMoments).
	onRecord func(Event)
}

// newLedger returns a ledger sized for a run of n messages (more or other keys still fit).
func newLedger(n int) *Ledger {
	msgs := newMessages(n)
	return &Ledger{workers: map[string]*WorkerLedger{}, msgs: msgs, recov: newRecoveryTracker(msgs)}
}

// update runs fn on worker's ledger under the lock.
func (l *Ledger) update(worker string, fn func(*WorkerLedger)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.workers[worker]
	if w == nil {
		w = &WorkerLedger{}
		l.workers[worker] = w
	}
	fn(w)
}

func (l *Ledger) attempt(key string, a Attempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs.attempt(key, a)
}

// freed records that key's lease version v was released to Pending at t (messages.freed).
func (l *Ledger) freed(key string, v int64, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs.freed(key, v, t)
}

func (l *Ledger) commit(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.msgs.commit(key) {
		l.finished++
	}
	l.committed++
}

// progress is how many finalizes committed, all messages together (the runs' progress), and
// how many messages have had one.
func (l *Ledger) progress() (committed, finished int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.committed, l.finished
}

// FinishedCount is how many messages have had a finalize committed.
func (l *Ledger) FinishedCount() int { _, n := l.progress(); return n }

// Commits returns the committed finalizes per message key: how often an outcome was written.
// It builds a map of every message; the reports count from the ledger without it.
func (l *Ledger) Commits() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	l.msgs.recs.Each(func(k keyed.Ref, r *msgRec) {
		if r.commits > 0 {
			key := k.String()
			out[key] = l.msgs.commitsOf(key, r)
		}
	})
	return out
}

func (l *Ledger) record(e Event) Event {
	l.mu.Lock()
	e = l.log.add(e)
	l.msgs.observe(e)
	l.recov.observe(e)
	hook := l.onRecord
	l.mu.Unlock()
	if hook != nil {
		hook(e)
	}
	return e
}

// Worker returns a copy of one worker's ledger.
func (l *Ledger) Worker(name string) WorkerLedger {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := l.workers[name]; w != nil {
		return *w
	}
	return WorkerLedger{}
}

// Total adds up every worker's ledger.
func (l *Ledger) Total() WorkerLedger {
	l.mu.Lock()
	defer l.mu.Unlock()
	var t WorkerLedger
	for _, w := range l.workers {
		t.Loads += w.Loads
		t.RowsLoaded += w.RowsLoaded
		t.ClaimsWon += w.ClaimsWon
		t.ClaimsEmpty += w.ClaimsEmpty
		t.ClaimsBlocked += w.ClaimsBlocked
		t.ClaimsBackoff += w.ClaimsBackoff
		t.LockWaits += w.LockWaits
		t.LockWaited += w.LockWaited
		t.Reclaims += w.Reclaims
		t.Selects += w.Selects
		t.Takes += w.Takes
		t.ProcessingAttempts += w.ProcessingAttempts
		t.Finalized += w.Finalized
		t.RejectedFinalizes += w.RejectedFinalizes
		t.OwnershipViolations += w.OwnershipViolations
		t.Renewals += w.Renewals
		t.LostRenewals += w.LostRenewals
		t.BusyRetries += w.BusyRetries
		t.Crashes += w.Crashes
		t.Restarts += w.Restarts
	}
	return t
}

// Attempts returns the processing attempts per message key. It builds a map of every message
// processed, for a screen of a small run; the reports count from the ledger without it.
func (l *Ledger) Attempts() map[string][]Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]Attempt{}
	l.msgs.recs.Each(func(k keyed.Ref, r *msgRec) {
		if r.attempts > 0 {
			key := k.String()
			out[key] = append([]Attempt(nil), l.msgs.attemptsOf(key, r)...)
		}
	})
	return out
}

// Events returns the kept events, oldest first: every event of a run up to MaxEventsKept,
// then the first and the latest ones (Seq shows the gap).
func (l *Ledger) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.since(0)
}

// EventCount is the number of events so far, kept or not.
func (l *Ledger) EventCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.total
}

// EventsDropped is how many events were counted but not kept.
func (l *Ledger) EventsDropped() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.dropped()
}

// EventsSince returns the kept events numbered above n (after the first n events).
func (l *Ledger) EventsSince(n int) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.since(n)
}

// workerActions is how many worker actions (transactions and provider calls) were recorded.
func (l *Ledger) workerActions() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.acts
}

// messageCounts are the messages processed at least once, those processed more than once, and
// those whose outcome was written more than once.
func (l *Ledger) messageCounts() (processed, again, writtenAgain int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs.recs.Each(func(_ keyed.Ref, r *msgRec) {
		if r.attempts > 0 {
			processed++
		}
		if r.attempts > 1 {
			again++
		}
		if r.commits > 1 {
			writtenAgain++
		}
	})
	return processed, again, writtenAgain
}

// commitsOf is how many finalizes committed for key.
func (l *Ledger) commitsOf(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.msgs.recs.Get(key)
	return l.msgs.commitsOf(key, &r)
}

// attemptsFor returns the processing attempts of the rows' keys.
func (l *Ledger) attemptsFor(rows []Row) map[string][]Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]Attempt{}
	for _, row := range rows {
		r := l.msgs.recs.Get(row.IdempotencyKey)
		if as := l.msgs.attemptsOf(row.IdempotencyKey, &r); len(as) > 0 {
			out[row.IdempotencyKey] = append([]Attempt(nil), as...)
		}
	}
	return out
}
