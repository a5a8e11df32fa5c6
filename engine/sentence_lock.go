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
	return fmt.Sprintf("%s locked %s (BEGIN; SELECT … %s): its transaction stays open; the row still reads %s, the lock is not in it",
		e.Worker, e.Key, how, StatusPending)
}

// lockWaitSentence is a claim that waited for another transaction's row lock and gave up, or
// found the row taken once the lock was released.
func lockWaitSentence(e Event) string {
	holder := "another transaction"
	if e.Holder != "" {
		holder = e.Holder + "'s open transaction"
	}
	wait := e.Wait.Round(time.Millisecond)
	if e.Key == "" {
		return fmt.Sprintf("%s claim WAITED %s for a row lock held by %s, then found the row taken: BLOCKED, nothing claimed", e.Worker, wait, holder)
	}
	return fmt.Sprintf("%s claim WAITED %s for the row lock on %s, held by %s, and gave up (lock_timeout): BLOCKED, nothing claimed", e.Worker, wait, e.Key, holder)
}
