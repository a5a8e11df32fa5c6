package engine

import (
	"fmt"
	"strings"
	"time"
)

// Sentence is the one place an event is put in words: the report, the lab, the worker process
// and the transcript all show an event through it (Event.Text holds its result once the event is
// recorded). Events with no structure to speak of (phases, notes, the clock, settings) carry
// their words in Text, and Sentence returns them as they are.
func Sentence(e Event) string {
	n := e.Worker
	switch e.Kind {
	case EvLoad:
		if e.Outcome == OutcomeEmpty {
			return n + " loaded 0 pending rows"
		}
		keys := e.Key
		if e.Last != "" && e.Last != e.Key {
			keys += "…" + e.Last
		}
		return fmt.Sprintf("%s loaded %d pending %s (%s), no claim", n, e.Rows, plural(int(e.Rows), "row"), keys)
	case EvClaim:
		return claimSentence(e)
	case EvSelect:
		if e.Outcome == OutcomeEmpty {
			return n + " selected nothing: no claimable row"
		}
		return fmt.Sprintf("%s selected %s to claim (a plain read: nothing is locked yet)", n, e.Key)
	case EvTake:
		if e.Outcome == OutcomeBlocked {
			return takeBlockedSentence(e)
		}
		return fmt.Sprintf("%s took %s with an unconditional UPDATE, lease v%d until %s", n, e.Key, e.Version, FormatClock(e.Until))
	case EvLock:
		return lockSentence(e)
	case EvCheck:
		return checkSentence(e)
	case EvRenew:
		if e.Outcome == OutcomeLost {
			return fmt.Sprintf("%s heartbeat on %s: 0 rows affected, the lease is gone; it gives the message up", n, e.Key)
		}
		return fmt.Sprintf("%s heartbeat: renewed its lease on %s until %s", n, e.Key, FormatClock(e.Until))
	case EvFinalize:
		return finalizeSentence(e)
	case EvFail:
		return failSentence(e)
	case EvCrash:
		switch e.Outcome {
		case OutcomeHolding:
			return fmt.Sprintf("%s CRASHED holding %s: the row stays Processing, LockedBy=%s until %s", n, e.Key, e.ID, FormatClock(e.Until))
		case OutcomeUnfinished:
			return n + " CRASHED with unfinished loaded rows in memory (now lost)"
		case OutcomeLockReleased:
			return fmt.Sprintf("%s CRASHED inside its claim transaction: the server rolled it back, so the row lock on %s is released and the row is as it was", n, e.Key)
		}
		return n + " CRASHED"
	case EvRestart:
		return n + " restarted: a new connection, empty memory"
	case EvPause:
		if e.Holding != "" {
			return fmt.Sprintf("%s PAUSED (a long GC pause, a stalled VM) holding %s", n, e.Holding)
		}
		return n + " PAUSED (a long GC pause, a stalled VM)"
	case EvResume:
		if e.Holding != "" {
			return fmt.Sprintf("%s woke up, still believing it owns %s (lease v%d until %s)", n, e.Holding, e.Version, FormatClock(e.Until))
		}
		return n + " woke up"
	}
	return e.Text
}

// Subject is the worker Sentence(e) begins with, so that a screen can mark the name (in the
// worker's colour) without reading the words: e.Worker for what a worker did, "" for the
// clock, the settings, phases and notes.
func (e Event) Subject() string {
	switch e.Kind {
	case EvPhase, EvNote, EvClock, EvSetting, "":
		return ""
	}
	return e.Worker
}

// OutcomeUnfinished marks a crash that lost loaded rows it had not processed.
const OutcomeUnfinished = "unfinished"

func claimSentence(e Event) string {
	n := e.Worker
	if e.Wait > 0 {
		return lockWaitSentence(e)
	}
	switch e.Outcome {
	case OutcomeReclaimed:
		return fmt.Sprintf("%s reclaimed %s from %s (lease ended %s), lease v%d until %s",
			n, e.Key, e.PriorOwner, FormatClock(e.PriorUntil), e.Version, FormatClock(e.Until))
	case OutcomeWon:
		s := fmt.Sprintf("%s claimed %s, lease until %s", n, e.Key, FormatClock(e.Until))
		if e.Version > 1 {
			s += fmt.Sprintf(" (v%d)", e.Version)
		}
		return s
	case OutcomeEmpty:
		if e.Key != "" {
			return fmt.Sprintf("%s claim of %s empty: it is already Processed", n, e.Key)
		}
		return n + " claim empty: nothing left to claim"
	case OutcomeLostRace:
		switch {
		case e.Key == "":
			return n + " claim lost a race: another worker's claim took the row it found first; it claims again"
		case e.PriorOwner == "":
			return fmt.Sprintf("%s claim lost the race for %s: another worker's claim took it first; it claims again", n, e.Key)
		}
		return fmt.Sprintf("%s claim lost the race for %s: %s's claim took it first; it claims again", n, e.Key, e.PriorOwner)
	case OutcomeBlocked:
		switch {
		case e.PriorOwner == e.ID && n == e.ID:
			// Its memory of that attempt is gone (a crash, a restart): the lease binds it too.
			return fmt.Sprintf("%s claim BLOCKED: %s is leased by %s's own attempt from before its restart, until %s: it waits like any other worker",
				n, e.Key, e.PriorOwner, FormatClock(e.Until))
		case e.PriorOwner == e.ID:
			return fmt.Sprintf("%s claim BLOCKED: %s is leased by %s, its own worker id, for another attempt, until %s: it waits like any other worker",
				n, e.Key, e.PriorOwner, FormatClock(e.Until))
		}
		return fmt.Sprintf("%s claim BLOCKED: %s is leased by %s until %s (not expired)", n, e.Key, e.PriorOwner, FormatClock(e.Until))
	case OutcomeBackoff:
		return fmt.Sprintf("%s claim WAITS: %s is Pending, waiting for its backoff until %s (NextAttemptUtc, no lease); nothing else is claimable",
			n, e.Key, FormatClock(e.Until))
	}
	return e.Text
}

func checkSentence(e Event) string {
	n := e.Worker
	if e.Outcome == OutcomeExpired {
		return fmt.Sprintf("%s did not call the provider for %s: its lease ended at %s, %s before the call; it gives the message up and claims again",
			n, e.Key, FormatClock(e.Until), e.At.Sub(e.Until).Round(time.Millisecond))
	}
	if e.Outcome == OutcomeFenced {
		return fencedSentence(e)
	}
	answer := e.Outcome
	if e.Error != "" {
		answer += " (" + e.Error + ")"
	}
	if e.TxID != "" {
		answer += " (" + e.TxID + ")"
	}
	if e.Due.After(e.At) {
		return fmt.Sprintf("%s is processing %s: called the provider, answer %s due at %s", n, e.Key, answer, FormatClock(e.Due))
	}
	return fmt.Sprintf("%s processed %s: provider says %s", n, e.Key, answer)
}

func finalizeSentence(e Event) string {
	n := e.Worker
	var guards []string
	if e.OwnerCheck {
		guards = append(guards, "LockedBy="+e.ID)
	}
	if e.Fenced {
		guards = append(guards, fmt.Sprintf("LeaseVersion=%d", e.Version))
	}
	guard := "no ownership check"
	if len(guards) > 0 {
		guard = "WHERE " + strings.Join(guards, " AND ")
	}
	switch e.Outcome {
	case OutcomeRejected:
		return fmt.Sprintf("%s finalize of %s REJECTED: %s, 0 rows affected (row is %s, LockedBy=%s, v%d); rolled back, payment untouched",
			n, e.Key, guard, e.PriorStatus, orNone(e.PriorOwner), e.PriorVersion)
	case OutcomeViolation:
		return fmt.Sprintf("%s finalized %s without owning it: OWNERSHIP VIOLATION (its lease v%d; the row was %s, LockedBy=%s, v%d)",
			n, e.Key, e.Version, e.PriorStatus, orNone(e.PriorOwner), e.PriorVersion)
	}
	return fmt.Sprintf("%s finalized %s: payment %s, outbox Processed (%s, %d row), committed", n, e.Key, e.Payment, guard, e.Rows)
}
