package diagram

import (
	"fmt"
	"time"

	"leaselab/engine"
	"leaselab/ui/common"
)

// moments are the turns of the run that the diagram's bars show, in words, oldest first: a
// crash or a pause holding a lease, a reclaim after a lease ended, a finalize that was rejected
// or wrote without owning, a renewal that found the lease gone, claims blocked by a live lease.
// They are said from the events' fields alone, with the times of the ruler.
func (st *spaceTime) moments() []string {
	if len(st.Cols) == 0 {
		return nil
	}
	t0 := st.Cols[0].At
	at := func(t time.Time) string { return offsetLabel(t.Sub(t0)) }
	var out []string
	type blockKey struct{ worker, key string }
	blocked := map[blockKey]int{}
	var blockOrder []blockKey
	blockUntil := map[blockKey]time.Time{}
	for c, col := range st.Cols {
		e := col.Ev
		if e == nil || e.Worker == "" {
			continue
		}
		l := st.leaseAt(e.Worker, e.Key, c)
		key, who := PlainText(e.Key), PlainText(e.Worker)
		switch {
		case e.Kind == engine.EvCrash && e.Key != "" && l != nil:
			out = append(out, fmt.Sprintf("%s crashed at %s holding %s: its lease keeps everyone out until %s",
				who, at(e.At), leaseLabel(l), at(l.Until)))
		case e.Kind == engine.EvPause && st.leaseOf(e.Worker, c) != nil:
			p := st.leaseOf(e.Worker, c)
			out = append(out, fmt.Sprintf("%s paused at %s holding %s: the lease ends at %s whether it wakes or not",
				who, at(e.At), leaseLabel(p), at(p.Until)))
		case e.Kind == engine.EvClaim && e.Outcome == engine.OutcomeReclaimed && l != nil:
			s := fmt.Sprintf("%s reclaimed %s at %s as v%d", who, key, at(e.At), e.Version)
			if prev := st.before(l); prev != nil {
				s += fmt.Sprintf(": %s's v%d had ended at %s", st.lanes[prev.lane].name, prev.Version, at(prev.Until))
			}
			out = append(out, s)
		case e.Kind == engine.EvFinalize && (e.Outcome == engine.OutcomeRejected || e.Outcome == engine.OutcomeViolation):
			verb := "changed 0 rows and rolled back"
			if e.Outcome == engine.OutcomeViolation {
				verb = "wrote WITHOUT OWNING the row"
			}
			s := fmt.Sprintf("%s's finalize of %s at %s %s", who, key, at(e.At), verb)
			if l != nil && e.At.After(l.Until) {
				s += fmt.Sprintf(": its lease v%d had ended at %s", l.Version, at(l.Until))
			}
			out = append(out, s)
		case e.Kind == engine.EvRenew && e.Outcome == engine.OutcomeLost:
			out = append(out, fmt.Sprintf("%s's heartbeat on %s at %s found the lease gone", who, key, at(e.At)))
		case e.Kind == engine.EvClaim && e.Outcome == engine.OutcomeBlocked:
			k := blockKey{who, key}
			if blocked[k] == 0 {
				blockOrder = append(blockOrder, k)
			}
			blocked[k]++
			blockUntil[k] = e.Until
		}
	}
	for _, k := range blockOrder {
		out = append(out, fmt.Sprintf("%s's claim was blocked %d %s by the live lease on %s until %s",
			k.worker, blocked[k], common.Plural(blocked[k], "time"), k.key, at(blockUntil[k])))
	}
	return out
}

// leaseAt is worker's latest lease on key begun at or before column c.
func (st *spaceTime) leaseAt(worker, key string, c int) *stLease {
	var found *stLease
	for _, l := range st.Leases {
		if st.lanes[l.lane].name == worker && l.Key == PlainText(key) && l.Start <= c {
			found = l
		}
	}
	return found
}

// leaseOf is the lease worker holds at column c: its latest one begun before c that has not
// ended and whose row is not finished there.
func (st *spaceTime) leaseOf(worker string, c int) *stLease {
	var found *stLease
	for _, l := range st.Leases {
		if st.lanes[l.lane].name == worker && l.Start <= c && c <= l.End && l.fillAt(c) != fillDone {
			found = l
		}
	}
	return found
}

// before is the lease on the same key that came before l, by any worker.
func (st *spaceTime) before(l *stLease) *stLease {
	var found *stLease
	for _, p := range st.Leases {
		if p != l && p.Key == l.Key && p.Start < l.Start {
			found = p
		}
	}
	return found
}
