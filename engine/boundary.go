package engine

import "time"

// The boundary of a lease's end (issue 32's coarse-clock). A lease is live up to and including
// LockedUntilUtc, and the claim's condition says so: LockedUntilUtc < now. With strict-expiry
// off the claim takes a lease at the instant it ends already, LockedUntilUtc <= now, as a claim
// does that copies the boundary of a due time (pg-boss's start_after <= now()) to a lease's end:
// the owner's last instant is then another worker's first, and with a coarse clock, whose
// statements share one now, that instant comes often.
//
// Times are kept to the millisecond, so LockedUntilUtc <= now is LockedUntilUtc < now + 1 ms:
// the claim judges expiry by its now plus a millisecond (ClaimRequest.Now, which the lease end
// it writes does not use), and the store's statements stay as they are. Its due comparison, on
// the same now, then takes a backoff 1 ms early.

// inclusiveExpiry is req as the settings make it: unchanged with strict-expiry on (the
// default); off, judging expiry one millisecond later.
func inclusiveExpiry(req ClaimRequest, s Settings) ClaimRequest {
	if s.StrictExpiry {
		return req
	}
	req.Now = req.Now.Add(time.Millisecond)
	if wall := req.Clock; wall != nil {
		// One reading of the clock is both times: read a millisecond on, and the lease it
		// writes a millisecond shorter, so that its end stays reading + lease.
		req.Clock = func() time.Time { return wall().Add(time.Millisecond) }
		req.Lease -= time.Millisecond
	}
	return req
}

// claimedAt is the time a claim's event says it ran at: the claim's own now, without the
// millisecond inclusiveExpiry added.
func claimedAt(at time.Time, s Settings) time.Time {
	if s.StrictExpiry || at.IsZero() {
		return at
	}
	return at.Add(-time.Millisecond)
}

// boundaryLesson reports whether the run is about a lease's last instant: its lesson teaches
// strict-expiry, or it starts with it off. Its report then has the clocks' check,
// no-early-reclaim: a reclaim at the instant a lease ends took it while it was live.
func (v *runView) boundaryLesson() bool {
	return v.sc.Teaches == ToggleStrictExpiry || !v.initial.StrictExpiry
}
