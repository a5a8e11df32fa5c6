package engine

// leaseEvents keeps, from every event as it is recorded, the events that say who held which
// lease on which message and for how long: every claim or take that set a lease, the latest
// renewal of each lease, and the first ownership violation of each message. A classification of
// repeated processing that needs the lease spans of the whole run reads these (LeaseEvents),
// not the kept event log, which drops the middle of a long run. Its size is bounded by the
// claims, not by the renewals: a renewal replaces the one before it on the same lease.
type leaseEvents struct {
	events   []Event
	held     map[[2]string]int64 // (key, worker) -> the lease version it last took
	renewal  map[leaseHolder]int // a lease's renewal -> its index in events
	violated map[string]bool     // keys with a violation kept
}

// leaseHolder is one worker's hold of one lease version on one message.
type leaseHolder struct {
	key, worker string
	version     int64
}

func newLeaseEvents() *leaseEvents {
	return &leaseEvents{held: map[[2]string]int64{}, renewal: map[leaseHolder]int{}, violated: map[string]bool{}}
}

// observe takes the next event, in the order events are recorded.
func (g *leaseEvents) observe(e Event) {
	switch {
	case e.Kind == EvFinalize && e.Outcome == OutcomeViolation:
		if !g.violated[e.Key] {
			g.violated[e.Key] = true
			g.events = append(g.events, e)
		}
	case e.Kind == EvRenew && e.Outcome == OutcomeRenewed:
		h := leaseHolder{e.Key, e.Worker, g.held[[2]string{e.Key, e.Worker}]}
		if i, ok := g.renewal[h]; ok {
			if e.Until.After(g.events[i].Until) {
				g.events[i] = e // the lease's span ends at its latest renewal
			}
			return
		}
		g.renewal[h] = len(g.events)
		g.events = append(g.events, e)
	case e.SetsLease() && e.Version > 0:
		g.held[[2]string{e.Key, e.Worker}] = e.Version
		g.events = append(g.events, e)
	}
}

// LeaseEvents returns, in the order they happened, every event that set a lease, the latest
// renewal of each lease, and the first ownership violation of each message, from the whole run
// however long (the kept log, Events, leaves out the middle of a long one).
func (l *Ledger) LeaseEvents() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.lease.events...)
}
