package engine

import "testing"

// The log keeps the first KeepHead and the latest KeepTail events, numbers every event, and
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
	if len(evs) != MaxEventsKept || evs[0].Seq != 1 || evs[KeepHead-1].Seq != KeepHead ||
		evs[KeepHead].Seq != total-KeepTail+1 || evs[len(evs)-1].Seq != total {
		t.Fatalf("kept %d: first %d, head end %d, tail start %d, last %d", len(evs), evs[0].Seq,
			evs[KeepHead-1].Seq, evs[KeepHead].Seq, evs[len(evs)-1].Seq)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq {
			t.Fatalf("out of order at %d: %d after %d", i, evs[i].Seq, evs[i-1].Seq)
		}
	}
	for _, c := range []struct{ n, want, first int }{
		{total - 3, 3, total - 2},                       // the lab's newest events
		{total, 0, 0},                                   // nothing new
		{KeepHead - 2, KeepTail + 2, KeepHead - 1},      // from the head across the gap
		{KeepHead + 10, KeepTail, total - KeepTail + 1}, // inside the gap: the kept tail
	} {
		got := l.EventsSince(c.n)
		if len(got) != c.want || (c.want > 0 && got[0].Seq != c.first) {
			t.Errorf("EventsSince(%d): %d events from %v, want %d from %d", c.n, len(got), got[:min(1, len(got))], c.want, c.first)
		}
	}
}
