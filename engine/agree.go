package engine

import "fmt"

// Disagreements lists the words of a summary that the run's events contradict: a recovery that
// says nobody took a crashed owner's message over while an event shows who did, a claim
// counted as blocked by a live lease that names no owner, a count of blocked or waiting claims
// that is not the number of such events, a check or a verdict that its own figures contradict.
// events are the run's events in order; complete says whether they are all of them (the
// event log keeps the first and the latest ones of a long run: Ledger().EventsDropped() is 0
// when it kept them all), and the counts are compared only then. It is what a test of every path checks after every move
// (the lab's search, TestChecksAgreeWithTheEvents); nil when everything agrees.
func Disagreements(sum *Summary, events []Event, complete bool) []string {
	var out []string
	bad := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if complete {
		for _, r := range sum.Recovery {
			if taker, at := takerAfterCrash(events, r); taker != r.ReclaimedBy {
				bad("recovery of %s: the check says %q, the events show %s taking it over at %s", r.Key, r.Words(), orNobody(taker), at)
			}
		}
	}
	blocked, waiting := 0, 0
	for _, e := range events {
		switch {
		case e.BlockedByLease():
			blocked++
			if e.PriorOwner == "" && e.Wait == 0 {
				bad("event %d %q: counted as blocked by a live lease, which names no owner", e.Seq, e.Words())
			}
		case e.Kind == EvTake && e.Outcome == OutcomeBlocked:
			blocked++
		case e.WaitsForBackoff():
			waiting++
		}
	}
	if complete && (blocked != sum.ClaimsBlocked || waiting != sum.ClaimsBackoff) {
		bad("claims blocked %d and waiting for a backoff %d, the events show %d and %d", sum.ClaimsBlocked, sum.ClaimsBackoff, blocked, waiting)
	}
	if n := sum.ReprocessedAfterLostLease + sum.ProcessedByTwoOwners + sum.ReprocessedBySameWorker; n != sum.ProcessedMoreThanOnce {
		bad("processed more than once %d, but %d after a lost lease + %d by two owners + %d by the same worker",
			sum.ProcessedMoreThanOnce, sum.ReprocessedAfterLostLease, sum.ProcessedByTwoOwners, sum.ReprocessedBySameWorker)
	}
	passed := true
	for _, c := range sum.Checks {
		passed = passed && (c.OK || !c.Decides)
		if c.ID == CheckOneOwner && c.OK != (sum.ProcessedByTwoOwners == 0) {
			bad("check %q is %v with %d messages by two owners at once", c.Name, c.OK, sum.ProcessedByTwoOwners)
		}
		if c.ID == CheckRecovered && c.OK != (sum.Recovered == sum.CrashedOwners) {
			bad("check %q is %v with %d of %d recovered", c.Name, c.OK, sum.Recovered, sum.CrashedOwners)
		}
	}
	if passed != sum.Passed {
		bad("the verdict says passed=%v, its checks say %v", sum.Passed, passed)
	}
	return out
}

// takerAfterCrash is the first worker whose event took r's message over after its owner's
// crash (Event.TakesOver), as the recovery tracker decides it, and when; "" when none did.
func takerAfterCrash(events []Event, r Recovery) (string, string) {
	crashed, restarted := false, false
	for _, e := range events {
		switch {
		case !crashed:
			crashed = e.Kind == EvCrash && e.Worker == r.CrashedOwner && e.Key == r.Key && FormatClock(e.At) == r.CrashedAt
		case e.Kind == EvRestart && e.Worker == r.CrashedOwner:
			restarted = true
		case e.Key == r.Key && e.TakesOver() && (e.Worker != r.CrashedOwner || restarted):
			return e.Worker, FormatClock(e.At)
		}
	}
	return "", ""
}

func orNobody(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}
