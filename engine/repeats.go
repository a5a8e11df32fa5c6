package engine

import "slices"

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

// repeats classifies the messages processed more than once, from what the ledger kept of each:
// its attempts, its committed finalizes, its violations and the spans of its leases (the
// latest end its claim and its renewals gave each).
func (m *messages) repeats() Repeats {
	var r Repeats
	m.recs.each(func(k keyRef, rec *msgRec) {
		if rec.attempts < 2 {
			return
		}
		key := k.String()
		if rec.commits > 1 || rec.flags&recViolated != 0 || overlapping(m.spill[key]) {
			r.TwoOwners++
		} else {
			r.AfterLostLease++
			r.AgainKeys = append(r.AgainKeys, key)
		}
	})
	slices.Sort(r.AgainKeys)
	return r
}

// overlapping reports whether two attempts on a message could each believe they owned it at the
// same time: an attempt without a lease, two attempts under one lease, or two leases whose spans
// meet (a lease is live up to and including its LockedUntilUtc). Spans, not the order of the
// log, decide: a worker may record its claim after another worker's later reclaim.
func overlapping(s *msgSpill) bool {
	for i, a := range s.attempts {
		x := s.spanFrom(a.Version)
		if a.Version == 0 || x == nil {
			return true // no lease, or one the log does not show: nothing proves it was alone
		}
		for _, b := range s.attempts[:i] {
			y := s.spanFrom(b.Version)
			if b.Version == a.Version || (!x.at.After(y.until) && !y.at.After(x.until)) {
				return true
			}
		}
	}
	return false
}

// repeats classifies the run's repeated messages (Repeats).
func (l *Ledger) repeats() Repeats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msgs.repeats()
}
