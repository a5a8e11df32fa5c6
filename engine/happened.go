package engine

import "fmt"

// What happened to a message, in the words every face uses: the report, the lab, --json, the
// transcript and the teacher's view all decide "reclaimed", "blocked by a live lease", "waiting
// for its backoff", "two owners at once" and "processed again by the same worker" through the
// definitions here (the last two are Repeats, repeats.go), never each its own way.

// TakesOver reports whether e gave its worker a lease on e.Key: a claim that won or reclaimed
// the row, or a non-atomic take (an unconditional UPDATE, over whatever lease the row had).
// After a crash, the first event that takes the crashed owner's message over is its reclaim
// (Recovery), before or after the lease ended.
func (e Event) TakesOver() bool {
	switch e.Kind {
	case EvClaim:
		return e.Outcome == OutcomeWon || e.Outcome == OutcomeReclaimed
	case EvTake:
		return e.Outcome == OutcomeTaken
	}
	return false
}

// BlockedByLease reports whether e is a claim that found work, all of it under another
// worker's live lease (PriorOwner its owner, Until its end).
func (e Event) BlockedByLease() bool { return e.Kind == EvClaim && e.Outcome == OutcomeBlocked }

// WaitsForBackoff reports whether e is a claim that found work, all of it waiting for its
// backoff: a Pending row, released by a failed attempt, not claimable before its
// NextAttemptUtc (Until). Nobody holds it: it is not a lease.
func (e Event) WaitsForBackoff() bool { return e.Kind == EvClaim && e.Outcome == OutcomeBackoff }

// Words is the recovery of one crashed owner's message in one sentence: who took it over, and
// whether that was after the lease ended (a reclaim) or over the live lease.
func (r Recovery) Words() string {
	switch {
	case r.ReclaimedBy == "":
		return fmt.Sprintf("%s: reclaimed by nobody yet, processed %d×", r.Key, r.ProcessedTimes)
	case !r.ReclaimedAfterExpiry:
		return fmt.Sprintf("%s: taken by %s at %s over the live lease (until %s), not reclaimed after expiry; processed %d× since",
			r.Key, r.ReclaimedBy, r.ReclaimedAt, r.LeaseUntil, r.ProcessedTimes)
	}
	s := fmt.Sprintf("%s: reclaimed by %s, processed %d×", r.Key, r.ReclaimedBy, r.ProcessedTimes)
	if r.ProcessedTimes > 1 {
		s += " (again after a lost lease: at-least-once)"
	}
	return s
}
