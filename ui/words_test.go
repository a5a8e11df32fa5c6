package ui

import (
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/workers"
)

// One of a thing is singular: "1 row", "1 message".
func TestOneIsSingular(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	l.must("Outbox: 1 row of OutboxMessages")
	l.mustNot("1 rows", "1 messages")
	if got := allMessages(1); got != "the 1 message" {
		t.Errorf("allMessages(1) = %q", got)
	}
}

// --workers and --messages keep the title true.
func TestTitleFollowsTheOverrides(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{Workers: 3, Messages: 40})
	l.must("Playground: three workers, 40 payments, you drive")
	l.mustNot("two workers, six payments")
}

// Every worker line of the table has the same format: the long counts for all, or the short
// ones for all, though one worker's long counts would fit and another's would not.
func TestWorkerLinesShareOneFormat(t *testing.T) {
	st := common.DefaultStyles(nil)
	f := &common.Frame{Frame: engine.Frame{
		Workers: []engine.WorkerView{{Name: "Worker-A", State: "claimed PAY-001"}, {Name: "Worker-B", State: "idle"}},
		Ledgers: []engine.WorkerLedger{
			{ClaimsWon: 1},
			{ClaimsWon: 12, ClaimsBlocked: 30, Reclaims: 4, ProcessingAttempts: 12, Finalized: 11, RejectedFinalizes: 1, Crashes: 2},
		},
	}}
	for _, w := range []int{100, 110, 120, 160} {
		lines := workers.New().Lines(f, common.Changes{}, &st, w, true, 2)
		var long, short int
		for _, line := range lines[1:] {
			switch {
			case strings.Contains(line, " · processed "):
				long++
			case strings.Contains(line, " proc "):
				short++
			}
		}
		if long+short != 2 || long > 0 && short > 0 {
			t.Errorf("at %d columns, worker lines: %d long, %d short; want one format:\n%s", w, long, short, strings.Join(lines, "\n"))
		}
	}
}

// A restarted worker blocked by the lease of its own attempt from before the crash says so.
func TestBlockedByItsOwnEarlierLease(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	l.press("1", "s") // Worker-A claims PAY-001 (a step outside the script)
	l.press("x", "r", "s")
	l.must("Worker-A claim BLOCKED: PAY-001 is leased by Worker-A's own attempt from before its restart")
}
