package engine

import "time"

// crashRecord follows one crash of a worker that held a message, as the events arrive: the
// lease it held, whether another worker was blocked by it (Event.BlockedByLease), and who took
// the message over (Event.TakesOver: its reclaim, after the lease ended or not). It is
// what Summary.Recovery reports, kept as the run goes so that it needs no event log.
type crashRecord struct {
	key, owner     string
	crashedAt      time.Time
	until          time.Time // the lease the crashed owner held (zero: none)
	reclaimedBy    string
	reclaimedAt    time.Time
	reclaimVersion int64 // the lease version of the reclaim
	blocked        bool  // another worker's claim was blocked by the lease before the reclaim
	afterExpiry    bool  // the reclaim came after the lease's end
	restarted      bool  // the owner restarted: from then on its name is a new instance
}

// recovery is the record as Summary.Recovery shows it, without what only the summary knows
// (ProcessedTimes, OK).
func (c *crashRecord) recovery() Recovery {
	r := Recovery{Key: c.key, CrashedOwner: c.owner, CrashedAt: FormatClock(c.crashedAt), LeaseUntil: FormatClock(c.until),
		BlockedBeforeExpiry: c.blocked, ReclaimedBy: c.reclaimedBy, ReclaimedAfterExpiry: c.afterExpiry}
	if c.reclaimedBy != "" {
		r.ReclaimedAt = FormatClock(c.reclaimedAt)
	}
	return r
}

// recoveryTracker builds the crash records from every event, in the order they are recorded.
// What it holds grows with the crashes, not with the messages: the lease a crashed owner held
// is the message table's (messages.leaseEnd).
type recoveryTracker struct {
	msgs    *messages
	records []crashRecord
	open    map[string][]int32 // key -> its records not yet reclaimed
	owners  map[string][]int32 // crashed owner -> its records not yet marked restarted
}

func newRecoveryTracker(msgs *messages) *recoveryTracker {
	return &recoveryTracker{msgs: msgs, open: map[string][]int32{}, owners: map[string][]int32{}}
}

// observe takes the next event, after the message table has. A record sees only the events
// after its crash.
func (t *recoveryTracker) observe(e Event) {
	if e.Kind == EvRestart {
		for _, i := range t.owners[e.Worker] {
			t.records[i].restarted = true
		}
		delete(t.owners, e.Worker)
	}
	if recs := t.open[e.Key]; e.Key != "" && len(recs) > 0 {
		kept := recs[:0]
		for _, i := range recs {
			r := &t.records[i]
			closed := false
			if e.Worker != r.owner || r.restarted {
				switch {
				case e.BlockedByLease():
					r.blocked = true
				case e.TakesOver():
					r.reclaimedBy, r.reclaimedAt, r.reclaimVersion = e.Worker, e.At, e.Version
					r.afterExpiry = !r.until.IsZero() && e.At.After(r.until)
					closed = true
				}
			}
			if !closed {
				kept = append(kept, i)
			}
		}
		if len(kept) == 0 {
			delete(t.open, e.Key)
		} else {
			t.open[e.Key] = kept
		}
	}
	if e.Kind == EvCrash && e.Key != "" {
		i := int32(len(t.records))
		t.records = append(t.records, crashRecord{key: e.Key, owner: e.Worker, crashedAt: e.At, until: t.msgs.leaseEnd(e.Key, e.Worker)})
		t.open[e.Key] = append(t.open[e.Key], i)
		t.owners[e.Worker] = append(t.owners[e.Worker], i)
	}
}

// recoveries is the lease-expiry proof of every crash of a worker that held a lease: was
// another worker blocked before expiry, did one reclaim it after, and how often was the message
// processed after the reclaim (under the reclaim's lease or a later one). It counts every
// record and returns the first keep of them in full (all of them when keep < 0).
func (l *Ledger) recoveries(keep int) (examples []Recovery, total, recovered, again int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	examples = []Recovery{}
	for i := range l.recov.records {
		c := &l.recov.records[i]
		n := 0
		if c.reclaimVersion > 0 {
			n = l.msgs.processedSince(c.key, c.reclaimVersion)
		}
		// Recovered: another worker reclaimed it after expiry and processed it. More than once
		// is at-least-once (that owner lost its lease too, and a third reclaimed it), not a lost
		// recovery: two owners at once are the one-owner check's to count.
		ok := c.reclaimedBy != "" && c.afterExpiry && n >= 1
		total++
		if ok {
			recovered++
		}
		if n > 1 {
			again++
		}
		if keep < 0 || len(examples) < keep {
			r := c.recovery()
			r.ProcessedTimes, r.OK = n, ok
			examples = append(examples, r)
		}
	}
	return examples, total, recovered, again
}
