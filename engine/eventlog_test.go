package engine

import (
	"strings"
	"testing"
)

// The log keeps the first keepHead and the latest keepTail events, numbers every event, and
// serves EventsSince across the gap; the ledger's counts do not depend on it.
func TestEventLogKeepsHeadAndTail(t *testing.T) {
	l := newLedger(0)
	const total = 3*MaxEventsKept + 123
	for i := 0; i < total; i++ {
		l.record(Event{Kind: EvClaim, Outcome: OutcomeEmpty, Text: "poll"})
	}
	if l.EventCount() != total || l.EventsDropped() != total-MaxEventsKept || l.workerActions() != total {
		t.Fatalf("count %d, dropped %d, actions %d", l.EventCount(), l.EventsDropped(), l.workerActions())
	}
	evs := l.Events()
	if len(evs) != MaxEventsKept || evs[0].Seq != 1 || evs[keepHead-1].Seq != keepHead ||
		evs[keepHead].Seq != total-keepTail+1 || evs[len(evs)-1].Seq != total {
		t.Fatalf("kept %d: first %d, head end %d, tail start %d, last %d", len(evs), evs[0].Seq,
			evs[keepHead-1].Seq, evs[keepHead].Seq, evs[len(evs)-1].Seq)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq {
			t.Fatalf("out of order at %d: %d after %d", i, evs[i].Seq, evs[i-1].Seq)
		}
	}
	for _, c := range []struct{ n, want, first int }{
		{total - 3, 3, total - 2},                       // the lab's newest events
		{total, 0, 0},                                   // nothing new
		{keepHead - 2, keepTail + 2, keepHead - 1},      // from the head across the gap
		{keepHead + 10, keepTail, total - keepTail + 1}, // inside the gap: the kept tail
	} {
		got := l.EventsSince(c.n)
		if len(got) != c.want || (c.want > 0 && got[0].Seq != c.first) {
			t.Errorf("EventsSince(%d): %d events from %v, want %d from %d", c.n, len(got), got[:min(1, len(got))], c.want, c.first)
		}
	}
	// The report marks the gap.
	var b strings.Builder
	(&Report{Events: evs}).timeline(&b)
	if !strings.Contains(b.String(), "… 40123 events not kept here") {
		t.Errorf("timeline gap line missing: %.300s", b.String()[strings.Index(b.String(), "…")-50:])
	}
}
