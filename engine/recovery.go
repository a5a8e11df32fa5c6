package engine

import "time"

// crashRecord follows one crash of a worker that held a message, as the events arrive: the
// lease it held, whether another worker was blocked by it, and who reclaimed the message. It is
// what Summary.Recovery reports, kept as the run goes so that it needs no event log.
type crashRecord struct {
	Recovery
	until          time.Time // the lease the crashed owner held (zero: none)
	reclaimVersion int64     // the lease version of the reclaim
	restarted      bool      // the owner restarted: from then on its name is a new instance
	closed         bool      // reclaimed: nothing later changes the record
}

// recoveryTracker builds the crash records from every event, in the order they are recorded.
type recoveryTracker struct {
	leases  map[string]time.Time // worker + "\x00" + key -> the last lease end it set on key
	records []*crashRecord
	open    map[string][]*crashRecord // key -> its records not yet reclaimed
}

func newRecoveryTracker() *recoveryTracker {
	return &recoveryTracker{leases: map[string]time.Time{}, open: map[string][]*crashRecord{}}
}

// observe takes the next event. A record sees only the events after its crash.
func (t *recoveryTracker) observe(e Event) {
	if e.Kind == EvRestart {
		for _, recs := range t.open {
			for _, r := range recs {
				if r.CrashedOwner == e.Worker {
					r.restarted = true
				}
			}
		}
	}
	if recs := t.open[e.Key]; e.Key != "" && len(recs) > 0 {
		for _, r := range recs {
			if e.Worker == r.CrashedOwner && !r.restarted {
				continue
			}
			switch {
			case e.Kind == EvClaim && e.Outcome == OutcomeBlocked:
				r.BlockedBeforeExpiry = true
			case e.Kind == EvClaim && e.Outcome == OutcomeReclaimed:
				r.ReclaimedBy, r.ReclaimedAt, r.reclaimVersion = e.Worker, FormatClock(e.At), e.Version
				r.ReclaimedAfterExpiry = !r.until.IsZero() && e.At.After(r.until)
				r.closed = true
			}
		}
		kept := recs[:0]
		for _, r := range recs {
			if !r.closed {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			delete(t.open, e.Key)
		} else {
			t.open[e.Key] = kept
		}
	}
	if e.SetsLease() {
		t.leases[e.Worker+"\x00"+e.Key] = e.Until
	}
	if e.Kind == EvCrash && e.Key != "" {
		until := t.leases[e.Worker+"\x00"+e.Key]
		r := &crashRecord{Recovery: Recovery{Key: e.Key, CrashedOwner: e.Worker, CrashedAt: FormatClock(e.At),
			LeaseUntil: FormatClock(until)}, until: until}
		t.records = append(t.records, r)
		t.open[e.Key] = append(t.open[e.Key], r)
	}
}

// snapshot copies the records, in crash order.
func (t *recoveryTracker) snapshot() []crashRecord {
	out := make([]crashRecord, len(t.records))
	for i, r := range t.records {
		out[i] = *r
	}
	return out
}
