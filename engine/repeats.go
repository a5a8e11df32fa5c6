package engine

import (
	"slices"

	"leaselab/engine/internal/keyed"
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
	// TwoOwners are messages processed by two owners at once: an outcome written by an
	// attempt that did not own the row (an ownership violation), or attempts of two workers
	// that could each believe they owned it at the same time (an attempt without a lease, two
	// attempts under one lease, a lease taken over a live one: the non-atomic claim) or that
	// both wrote its outcome.
	TwoOwners int
	// SameWorker are messages processed again by the same worker, and by no other, that are
	// not AfterLostLease: written twice (a rescue set its finished message back to Pending, and
	// it claimed it again), or loaded again without a lease. One owner, though processed twice.
	SameWorker int
	// AgainKeys are the keys of AfterLostLease and SameWorker, sorted: a screen that marks
	// messages processed twice can tell these from the duplicates.
	AgainKeys []string
}

// repeats classifies the messages processed more than once, from what the ledger kept of each:
// its attempts, its committed finalizes, its violations and the spans of its leases (the
// latest end its claim and its renewals gave each).
func (m *messages) repeats() Repeats {
	var r Repeats
	m.recs.Each(func(k keyed.Ref, rec *msgRec) {
		if rec.attempts < 2 {
			return
		}
		key := k.String()
		s := m.spill[key]
		switch {
		case rec.flags&recViolated != 0:
			r.TwoOwners++
		case rec.commits <= 1 && !overlapping(s):
			r.AfterLostLease++
			r.AgainKeys = append(r.AgainKeys, key)
		case oneWorker(s):
			// One worker did it all: whatever it wrote, or held at once, nobody else owned
			// the message beside it.
			r.SameWorker++
			r.AgainKeys = append(r.AgainKeys, key)
		default:
			r.TwoOwners++
		}
	})
	slices.Sort(r.AgainKeys)
	return r
}

// oneWorker reports whether every attempt on a message was made by the same worker.
func oneWorker(s *msgSpill) bool {
	for _, a := range s.attempts {
		if a.Worker != s.attempts[0].Worker {
			return false
		}
	}
	return true
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
