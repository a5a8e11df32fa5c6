package room

import (
	"slices"
	"strconv"

	"leaselab/engine"
)

// The room's ledgers: what the attendees' workers did, counted from the events of their own
// actions as they happen, by attendee — who processed what, which message was processed by two
// of them and why, which lease was reclaimed from whom, whose finalize was refused or wrote
// without owning the row, and who left holding what. The engine's ledger counts the same
// actions by worker; this one keeps what the room's words need. Its memory grows with the
// messages processed and a bounded number of examples, whatever the length of the workshop.

// Bounds of what the ledger keeps (it counts everything).
const (
	maxAttemptsPerKey = 16  // processing attempts kept per message
	maxKeysPerSeat    = 8   // keys kept per attendee for "who processed what"
	maxExamples       = 200 // reclaims, refusals, violations and absences kept
)

// attempt is one processing attempt (a provider call) as the room saw it: by whom, under which
// lease version, and whether leasing and the atomic claim were on when it was made.
type attempt struct {
	seat, worker string
	version      int64
	leasing      bool
	atomic       bool
}

// Reclaim is a lease taken over after it ended: From's message, reclaimed by To at Version.
type Reclaim struct {
	Key, From, To string
	Version       int64
	FromAway      Away // why From was away then ("" when they were not)
}

// Finalize is a finalize the guards refused, or one that wrote without owning the row.
type Finalize struct {
	Key, Seat, Worker string
	Version           int64  // the lease version the worker held
	Owner             string // the row's LockedBy just before
	OwnerVersion      int64  // the row's LeaseVersion just before
	Fenced, Checked   bool   // the guards it ran with: lease version, owner
}

// Absence is an attendee leaving while their worker held a message.
type Absence struct {
	Seat, Key string
	Version   int64
	Why       Away
}

type ledger struct {
	attempts   map[string][]attempt // per message key, the first maxAttemptsPerKey
	keys       []string             // message keys in the order of their first attempt
	processed  map[string]int       // per attendee: processing attempts
	keysBy     map[string][]string  // per attendee: the first maxKeysPerSeat keys they processed
	calls      int                  // processing attempts, all attendees
	reclaims   []Reclaim
	refused    []Finalize
	violations []Finalize
	absences   []Absence
	crashes    map[string]int // per attendee: crashes by the teacher
	counts     struct{ reclaims, refused, violations, absences int }
}

func newLedger() *ledger {
	return &ledger{attempts: map[string][]attempt{}, processed: map[string]int{}, keysBy: map[string][]string{},
		crashes: map[string]int{}}
}

// observe takes one of seat's actions, done by its worker, which held lease version version
// after it, under settings st.
func (l *ledger) observe(seat, worker string, ev engine.Event, version int64, st engine.Settings) {
	switch {
	case ev.Kind == engine.EvCheck && ev.Outcome != engine.OutcomeExpired && ev.Outcome != engine.OutcomeFenced && ev.Outcome != engine.OutcomeError:
		l.calls++
		l.processed[seat]++
		if ks := l.keysBy[seat]; len(ks) < maxKeysPerSeat && !slices.Contains(ks, ev.Key) {
			l.keysBy[seat] = append(ks, ev.Key)
		}
		as, seen := l.attempts[ev.Key]
		if !seen {
			l.keys = append(l.keys, ev.Key)
		}
		if len(as) < maxAttemptsPerKey {
			l.attempts[ev.Key] = append(as, attempt{seat: seat, worker: worker, version: version, leasing: st.Leasing, atomic: st.AtomicClaim})
		}
	case ev.Kind == engine.EvClaim && ev.Outcome == engine.OutcomeReclaimed:
		l.counts.reclaims++
		if len(l.reclaims) < maxExamples {
			l.reclaims = append(l.reclaims, Reclaim{Key: ev.Key, From: ev.PriorOwner, To: seat, Version: ev.Version, FromAway: l.awayFor(ev.PriorOwner, ev.Key)})
		}
	case ev.Kind == engine.EvFinalize && (ev.Outcome == engine.OutcomeRejected || ev.Outcome == engine.OutcomeViolation):
		f := Finalize{Key: ev.Key, Seat: seat, Worker: worker, Version: ev.Version, Owner: ev.PriorOwner,
			OwnerVersion: ev.PriorVersion, Fenced: ev.Fenced, Checked: ev.OwnerCheck}
		if ev.Outcome == engine.OutcomeRejected {
			l.counts.refused++
			if len(l.refused) < maxExamples {
				l.refused = append(l.refused, f)
			}
		} else {
			l.counts.violations++
			if len(l.violations) < maxExamples {
				l.violations = append(l.violations, f)
			}
		}
	}
}

// awayFor is why owner was away when they last left holding key ("" when they did not).
func (l *ledger) awayFor(owner, key string) Away {
	for i := len(l.absences) - 1; i >= 0; i-- {
		if a := l.absences[i]; a.Seat == owner && a.Key == key {
			return a.Why
		}
	}
	return ""
}

// away records that seat left holding what ev (its worker's pause) says it held.
func (l *ledger) away(seat string, why Away, ev engine.Event) {
	if ev.Holding == "" {
		return
	}
	l.counts.absences++
	if len(l.absences) < maxExamples {
		l.absences = append(l.absences, Absence{Seat: seat, Key: ev.Holding, Version: ev.Version, Why: why})
	}
}

// crashed records the teacher's crash of seat's worker.
func (l *ledger) crashed(seat string, ev engine.Event) {
	l.crashes[seat]++
	if ev.Key != "" {
		l.counts.absences++
		if len(l.absences) < maxExamples {
			l.absences = append(l.absences, Absence{Seat: seat, Key: ev.Key, Version: ev.Version, Why: "crashed by the teacher"})
		}
	}
}

// Duplicate is a message processed (the provider called) by more than one worker, with why.
type Duplicate struct {
	Key   string
	Seats []string // the attendees whose workers processed it, in order, each once
	// AtOnce: two owners at the same time (leasing off, the atomic claim off, or a stale
	// worker called after its lease was reclaimed) — a failure; otherwise one after the
	// other, after a lease ran out (at-least-once).
	AtOnce bool
	Cause  string // in words: "leasing off", "atomic claim off", …
}

// duplicates lists every message processed by more than one worker, in the order of their
// first processing, with the cause the attempts show.
func (l *ledger) duplicates() []Duplicate {
	var out []Duplicate
	for _, key := range l.keys {
		as := l.attempts[key]
		if len(as) < 2 {
			continue
		}
		workers := map[string]bool{}
		for _, a := range as {
			workers[a.worker] = true
		}
		if len(workers) < 2 {
			continue // one worker called twice (a failed call retried): not two owners
		}
		out = append(out, duplicateOf(key, as))
	}
	return out
}

// duplicateOf finds the cause of the repeated attempts as: the first later attempt that shows
// one, in order of seriousness.
func duplicateOf(key string, as []attempt) Duplicate {
	d := Duplicate{Key: key}
	for _, a := range as {
		if !slices.Contains(d.Seats, a.seat) {
			d.Seats = append(d.Seats, a.seat)
		}
	}
	newest := as[0].version
	stale := -1
	for i, a := range as[1:] {
		if a.version < newest && stale < 0 {
			stale = i + 1
		}
		newest = max(newest, a.version)
	}
	switch {
	case !allOf(as, func(a attempt) bool { return a.leasing }):
		d.AtOnce, d.Cause = true, "leasing off"
	case !allOf(as, func(a attempt) bool { return a.atomic }):
		d.AtOnce, d.Cause = true, "atomic claim off"
	case stale > 0:
		a := as[stale]
		d.AtOnce, d.Cause = true, a.worker+" called the provider with lease version "+itoa(a.version)+" after the lease had moved on to version "+itoa(maxVersion(as[:stale]))
	default:
		d.Cause = "a lease ran out and another worker reclaimed it (lease version " + itoa(as[len(as)-1].version) + ")"
	}
	return d
}

func allOf(as []attempt, f func(attempt) bool) bool {
	for _, a := range as {
		if !f(a) {
			return false
		}
	}
	return true
}

func maxVersion(as []attempt) int64 {
	var v int64
	for _, a := range as {
		v = max(v, a.version)
	}
	return v
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
