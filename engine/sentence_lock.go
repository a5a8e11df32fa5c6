package engine

import (
	"fmt"
	"time"
)

// lockSentence is the first half of a two-step claim: the row locked, the transaction open.
func lockSentence(e Event) string {
	how := "FOR UPDATE SKIP LOCKED"
	if !e.SkipLocked {
		how = "FOR UPDATE"
	}
	s := fmt.Sprintf("%s locked %s (BEGIN; SELECT … %s): its transaction stays open; the row still reads %s, the lock is not in it",
		e.Worker, e.Key, how, StatusPending)
	if e.Wait > 0 {
		s += " (" + waitWords(e) + ")"
	}
	return s
}

// waitWords says how long a claim waited for which row lock, and whose: "waited 300ms for the
// row lock on PAY-001, held by Worker-A's open transaction".
func waitWords(e Event) string {
	holder := "another transaction"
	if e.Holder != "" {
		holder = e.Holder + "'s open transaction"
	}
	row := "a row lock"
	if e.WaitedFor != "" {
		row = "the row lock on " + e.WaitedFor
	}
	return fmt.Sprintf("WAITED %s for %s, held by %s", e.Wait.Round(time.Millisecond), row, holder)
}

// lockWaitSentence is a claim that waited for another transaction's row lock (skip-locked
// off): it gave up at lock_timeout, or took a row once the lock was released, or found none.
func lockWaitSentence(e Event) string {
	switch e.Outcome {
	case OutcomeWon, OutcomeReclaimed:
		plain := e
		plain.Wait = 0
		return fmt.Sprintf("%s — after it %s", claimSentence(plain), waitWords(e))
	case OutcomeBlocked:
		if e.Key != "" && e.Key == e.WaitedFor {
			return fmt.Sprintf("%s claim %s, and gave up (lock_timeout): BLOCKED, nothing claimed", e.Worker, waitWords(e))
		}
	}
	return fmt.Sprintf("%s claim %s, then found nothing it could claim (%s)", e.Worker, waitWords(e), e.Outcome)
}

// takeBlockedSentence is a non-atomic claim's take that met another transaction's row lock on
// the row it had selected, and gave up: at once (skip-locked on), or at lock_timeout.
func takeBlockedSentence(e Event) string {
	if e.Wait > 0 {
		return fmt.Sprintf("%s's unconditional UPDATE of %s %s, and gave up (lock_timeout): BLOCKED, nothing taken; it polls again",
			e.Worker, e.Key, waitWords(e))
	}
	return fmt.Sprintf("%s's unconditional UPDATE of %s met another transaction's row lock and did not wait (skip-locked): BLOCKED, nothing taken; it polls again",
		e.Worker, e.Key)
}
