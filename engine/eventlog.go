package engine

// The event log keeps what a person can read, not everything a long run does: the first
// KeepHead events (how the run began: the lesson) and the latest KeepTail (how it ended), in a
// ring. Seq keeps counting every event. Nothing is counted from the kept log: the ledgers, the
// attempts, the commits and the lease-expiry records (recovery.go) see every event as it is
// recorded.
const (
	KeepHead = 5_000
	KeepTail = 15_000
)

// MaxEventsKept is how many events a ledger keeps at most.
const MaxEventsKept = KeepHead + KeepTail

// eventLog is the kept events and the count of all of them. Not safe for concurrent use: the
// ledger's mutex guards it.
type eventLog struct {
	head  []Event // events 1..KeepHead
	tail  []Event // a ring of the latest events after the head
	start int     // index of the oldest event in tail once it is full
	total int     // every event recorded, kept or not
	acts  int     // worker actions (load, claim, …, finalize) recorded
}

// add numbers e, keeps it, and returns it numbered.
func (g *eventLog) add(e Event) Event {
	g.total++
	e.Seq = g.total
	switch {
	case len(g.head) < KeepHead:
		g.head = append(g.head, e)
	case len(g.tail) < KeepTail:
		g.tail = append(g.tail, e)
	default:
		g.tail[g.start] = e
		g.start = (g.start + 1) % KeepTail
	}
	switch e.Kind {
	case EvLoad, EvClaim, EvSelect, EvTake, EvCheck, EvRenew, EvFinalize, EvFail:
		g.acts++
	}
	return e
}

// since returns the kept events numbered above n, oldest first.
func (g *eventLog) since(n int) []Event {
	n = max(n, 0)
	var out []Event
	if n < len(g.head) {
		out = append(out, g.head[n:]...)
	}
	// The ring holds events total-len(tail)+1 … total, the oldest at start.
	first := g.total - len(g.tail) + 1
	skip := max(0, n+1-first)
	for i := skip; i < len(g.tail); i++ {
		out = append(out, g.tail[(g.start+i)%len(g.tail)])
	}
	return out
}

// dropped is how many events were recorded but not kept.
func (g *eventLog) dropped() int { return g.total - len(g.head) - len(g.tail) }
