package engine

import (
	"slices"
	"time"
)

// Repeats says why the messages processed more than once were processed again. Every report
// (run, --json, the lab, stress) counts them with this one definition, from the ledger.
//
// A lease promises one owner at a time, not one provider call: a worker that crashes or stalls
// after calling the provider and before its finalize loses its lease, another worker reclaims the
// message once the lease has ended and calls the provider again. That is at-least-once delivery,
// which no lease prevents (the idempotency key is there for it), and the outcome is still written
// once, by the live owner. Two owners at once is the failure leasing exists to prevent.
type Repeats struct {
	// AfterLostLease are messages processed again only after their earlier owners' leases had
	// ended (a crash, a pause, work that outlived its lease), and written at most once, by an
	// owner: at-least-once.
	AfterLostLease int
	// TwoOwners are messages processed by two owners at once: an attempt without a lease
	// (leasing off), two attempts under one lease, a lease taken over a live one (the non-atomic
	// claim), an outcome written more than once, or written by an attempt that did not own the
	// row (an ownership violation).
	TwoOwners int
	// AgainKeys are the keys of AfterLostLease, sorted: a screen that marks messages processed
	// twice can tell these from the duplicates.
	AgainKeys []string
}

// leaseSpan is one lease on a message, as the event log shows it: when it was taken, and the
// latest end its claim and its renewals gave it.
type leaseSpan struct {
	at, until time.Time
}

// classifyRepeats classifies the messages processed more than once, from the processing
// attempts, the committed finalizes per key and the event log (the leases and their renewals).
func classifyRepeats(attempts map[string][]Attempt, commits map[string]int, events []Event) Repeats {
	leases := map[string]map[int64]*leaseSpan{} // key -> lease version -> span
	held := map[[2]string]int64{}               // (key, worker) -> the version it last took
	violated := map[string]bool{}
	for _, e := range events {
		switch {
		case e.Kind == EvFinalize && e.Outcome == OutcomeViolation:
			violated[e.Key] = true
		case e.Kind == EvRenew && e.Outcome == OutcomeRenewed:
			// A renewal extends the lease its worker holds (same version).
			if sp := leases[e.Key][held[[2]string{e.Key, e.Worker}]]; sp != nil && e.Until.After(sp.until) {
				sp.until = e.Until
			}
		case e.SetsLease() && e.Version > 0:
			if leases[e.Key] == nil {
				leases[e.Key] = map[int64]*leaseSpan{}
			}
			leases[e.Key][e.Version] = &leaseSpan{at: e.At, until: e.Until}
			held[[2]string{e.Key, e.Worker}] = e.Version
		}
	}
	var r Repeats
	for key, as := range attempts {
		if len(as) < 2 {
			continue
		}
		if commits[key] > 1 || violated[key] || overlapping(as, leases[key]) {
			r.TwoOwners++
		} else {
			r.AfterLostLease++
			r.AgainKeys = append(r.AgainKeys, key)
		}
	}
	slices.Sort(r.AgainKeys)
	return r
}

// overlapping reports whether two attempts on a message could each believe they owned it at the
// same time: an attempt without a lease, two attempts under one lease, or two leases whose spans
// meet (a lease is live up to and including its LockedUntilUtc). Spans, not the order of the
// log, decide: a worker may record its claim after another worker's later reclaim.
func overlapping(as []Attempt, leases map[int64]*leaseSpan) bool {
	for i, a := range as {
		if a.Version == 0 || leases[a.Version] == nil {
			return true // no lease, or one the log does not show: nothing proves it was alone
		}
		for _, b := range as[:i] {
			x, y := leases[a.Version], leases[b.Version]
			if b.Version == a.Version || (!x.at.After(y.until) && !y.at.After(x.until)) {
				return true
			}
		}
	}
	return false
}
