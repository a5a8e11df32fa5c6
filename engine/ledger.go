package engine

import (
	"maps"
	"sync"
	"time"
)

// WorkerLedger counts what one worker did. Claim attempts and processing attempts are kept
// apart: a claim only acquires a lease; processing is the work (the provider call).
type WorkerLedger struct {
	Loads               int // naive bulk loads
	RowsLoaded          int // rows those loads returned
	ClaimsWon           int
	ClaimsEmpty         int
	ClaimsBlocked       int
	Reclaims            int // claims won over an expired lease of another owner
	Selects             int // non-atomic claim, first half
	Takes               int // non-atomic claim, second half (unconditional UPDATE)
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

// Ledger holds every worker's ledger, the per-message processing attempts and the event log.
// Safe for concurrent use.
type Ledger struct {
	mu       sync.Mutex
	workers  map[string]*WorkerLedger
	attempts map[string][]Attempt // key -> attempts, in order
	commits  map[string]int       // key -> committed finalizes (writes of an outcome)
	events   []Event
	// onRecord, when set, is called with each event once it is recorded, outside the lock
	// (Session.RecordMoments).
	onRecord func(Event)
}

func newLedger() *Ledger {
	return &Ledger{workers: map[string]*WorkerLedger{}, attempts: map[string][]Attempt{}, commits: map[string]int{}}
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
	l.attempts[key] = append(l.attempts[key], a)
}

func (l *Ledger) commit(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.commits[key]++
}

// Commits returns the committed finalizes per message key: how often an outcome was written.
func (l *Ledger) Commits() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.commits)
}

func (l *Ledger) record(e Event) Event {
	l.mu.Lock()
	e.Seq = len(l.events) + 1
	l.events = append(l.events, e)
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

// Attempts returns the processing attempts per message key.
func (l *Ledger) Attempts() map[string][]Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]Attempt, len(l.attempts))
	for k, v := range l.attempts {
		out[k] = append([]Attempt(nil), v...)
	}
	return out
}

// Events returns the event log, oldest first.
func (l *Ledger) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// EventCount is the number of events so far.
func (l *Ledger) EventCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// EventsSince returns the events after the first n.
func (l *Ledger) EventsSince(n int) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n >= len(l.events) {
		return nil
	}
	return append([]Event(nil), l.events[n:]...)
}
