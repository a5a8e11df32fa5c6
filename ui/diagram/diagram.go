// Package diagram is the space-time diagram (t): the run as a Lamport diagram, a lane per
// worker and a bar per lease from its claim to its LockedUntilUtc, in the place of the panes.
package diagram

import (
	"slices"
	"strings"
	"time"
	"unicode"

	"leaselab/engine"
)

// The space-time diagram (t) draws the run as a Lamport diagram in the terminal: one lane per
// worker, logical time from left to right. The axis is the order of events, one column each,
// not the scenario clock: in a lesson the clock stands still while most things happen (the
// whole concurrent phase of "after" is at 09:00:00.000Z), so a clock axis would pile every claim
// and finalize into one column. The clock is on the ruler instead, and every lease's end gets a
// column of its own at its place in time: a bar runs from the claim's column to the column of
// its LockedUntilUtc, so "the lease ran out before the clock moved" and "the finalize came after
// the lease ended" read straight off the picture.

// Marks on a lane, one cell each; legendOf says them in words.
const (
	MarkClaim    = 'C'
	MarkReclaim  = 'R'
	MarkTake     = 'T' // a non-atomic claim's unconditional UPDATE
	markSelect   = 's'
	markLoad     = 'L'
	markEmpty    = '-'
	markBlocked  = 'b'
	markCheck    = '*'
	markExpired  = 'E'
	markRenew    = 'H'
	markLost     = '?'
	markFinal    = 'F'
	markRejected = '!'
	markViolate  = 'V'
	markCrash    = 'X'
	markRestart  = '^'
	markPause    = 'Z'
	markResume   = 'W'

	fillHeld  = '='
	fillStuck = '~' // the owner is crashed or paused: nobody works, nobody else may take it
	fillDone  = '.' // the row is Processed: what is left of the lease no longer matters
	FillEnd   = '|' // the lease's LockedUntilUtc
)

// stColumn is one column of the diagram: an event, or the instant at which leases end.
type stColumn struct {
	At  time.Time
	Ev  *engine.Event // nil for a lease-end column
	End bool
}

// stLease is one lease, as a bar: from the column of its claim to that of its LockedUntilUtc.
type stLease struct {
	lane       int
	Key        string
	Version    int64
	Until      time.Time
	Start, End int // columns
	Last       int // the last column with a mark of this lease (a finalize after its end)
	track      int
	marks      map[int]rune
	fills      []stFill // fill changes, in column order
	done       bool     // the row was finalized while the lease ran
	reclaimed  bool
}

// stFill is a change of a bar's fill from a column on.
type stFill struct {
	col  int
	fill rune
}

// stLane is one worker's lane: as many tracks as its leases need at once, and the marks of
// what it did holding no lease.
type stLane struct {
	name  string
	marks map[int]rune
	keys  map[int]string // the message of a provider call made holding no lease
}

// spaceTime is the diagram's model: columns, lanes and leases, built from events alone.
type spaceTime struct {
	Cols   []stColumn
	lanes  []stLane
	Leases []*stLease
}

// Build lays events out as a diagram with a lane for each of workers (and one for any
// other worker the events name). Phases, notes and settings have no column.
func Build(events []engine.Event, workers []string) *spaceTime {
	st := &spaceTime{}
	laneOf := map[string]int{}
	addLane := func(name string) int {
		if i, ok := laneOf[name]; ok {
			return i
		}
		laneOf[name] = len(st.lanes)
		st.lanes = append(st.lanes, stLane{name: name, marks: map[int]rune{}, keys: map[int]string{}})
		return len(st.lanes) - 1
	}
	for _, w := range workers {
		addLane(w)
	}
	// The lease ends, after every renewal: each gets a column at its place in time.
	var kept []engine.Event
	var ends []time.Time
	for _, e := range events {
		switch {
		case e.Kind == engine.EvClock:
		case e.Worker == "" || e.Kind == engine.EvPhase || e.Kind == engine.EvNote || e.Kind == engine.EvSetting:
			continue
		default:
			addLane(e.Worker)
		}
		kept = append(kept, e)
		if e.SetsLease() {
			ends = append(ends, e.Until)
		}
	}
	slices.SortFunc(ends, time.Time.Compare)
	ends = slices.CompactFunc(ends, time.Time.Equal)
	endCol := map[time.Time]int{}
	emitEnds := func(before time.Time, all bool) {
		for len(ends) > 0 && (all || ends[0].Before(before)) {
			endCol[ends[0]] = len(st.Cols)
			st.Cols = append(st.Cols, stColumn{At: ends[0], End: true})
			ends = ends[1:]
		}
	}
	for i := range kept {
		emitEnds(kept[i].At, false)
		st.Cols = append(st.Cols, stColumn{At: kept[i].At, Ev: &kept[i]})
	}
	emitEnds(time.Time{}, true)
	st.mark(laneOf, endCol)
	return st
}

// mark walks the event columns, opening a lease at each claim and marking what each worker did
// on the lease it holds, or on its lane when it holds none.
func (st *spaceTime) mark(laneOf map[string]int, endCol map[time.Time]int) {
	byKey := map[int]map[string]*stLease{} // each lane's latest lease of a key
	current := map[int]*stLease{}          // the lease each lane works on
	paused := map[int]*stLease{}
	find := func(lane int, key string) *stLease { return byKey[lane][key] }
	for c, col := range st.Cols {
		e := col.Ev
		if e == nil || e.Kind == engine.EvClock {
			continue
		}
		lane := laneOf[e.Worker]
		on := func(l *stLease, r rune) {
			if l == nil {
				st.lanes[lane].marks[c] = r
				return
			}
			l.marks[c], l.Last = r, max(l.Last, c)
		}
		switch e.Kind {
		case engine.EvClaim, engine.EvTake:
			if !e.SetsLease() {
				on(nil, map[bool]rune{true: markBlocked, false: markEmpty}[e.Outcome == engine.OutcomeBlocked])
				continue
			}
			l, r := newLease(lane, c, e, endCol)
			on(l, r)
			st.Leases = append(st.Leases, l)
			if byKey[lane] == nil {
				byKey[lane] = map[string]*stLease{}
			}
			byKey[lane][e.Key], current[lane] = l, l
		case engine.EvSelect:
			on(nil, map[bool]rune{true: markSelect, false: markEmpty}[e.Outcome == engine.OutcomeSelected])
		case engine.EvLoad:
			on(nil, map[bool]rune{true: markLoad, false: markEmpty}[e.Outcome == engine.OutcomeLoaded])
		case engine.EvCheck:
			l := find(lane, e.Key)
			on(l, map[bool]rune{true: markExpired, false: markCheck}[e.Outcome == engine.OutcomeExpired])
			if l == nil {
				st.lanes[lane].keys[c] = PlainText(e.Key)
			}
		case engine.EvRenew:
			l := find(lane, e.Key)
			if e.Outcome == engine.OutcomeRenewed && l != nil {
				l.Until, l.End = e.Until, max(l.End, endCol[e.Until])
			}
			on(l, map[bool]rune{true: markRenew, false: markLost}[e.Outcome == engine.OutcomeRenewed])
		case engine.EvFinalize:
			l := find(lane, e.Key)
			on(l, finalizeMark(e.Outcome))
			if e.Outcome != engine.OutcomeRejected {
				st.finish(e.Key, c) // the row is Processed: every lease on it is over in effect
			}
			if current[lane] == l {
				delete(current, lane)
			}
		case engine.EvCrash:
			l := find(lane, e.Key)
			if e.Key == "" {
				l = nil
			}
			on(l, markCrash)
			l.setFill(c, fillStuck)
			delete(current, lane)
		case engine.EvRestart:
			on(nil, markRestart)
		case engine.EvPause:
			l := current[lane]
			on(l, markPause)
			l.setFill(c, fillStuck)
			paused[lane] = l
		case engine.EvResume:
			l := paused[lane]
			on(l, markResume)
			l.setFill(c, fillHeld)
			delete(paused, lane)
		}
	}
}

// newLease is the lease a claim (or a take) at column c opens on lane, and the mark of its
// claim: a reclaim, a take or a plain claim.
func newLease(lane, c int, e *engine.Event, endCol map[time.Time]int) (*stLease, rune) {
	l := &stLease{lane: lane, Key: PlainText(e.Key), Version: e.Version, Until: e.Until, Start: c, Last: c,
		End: max(c, endCol[e.Until]), marks: map[int]rune{}, fills: []stFill{{c, fillHeld}},
		reclaimed: e.Outcome == engine.OutcomeReclaimed}
	switch {
	case l.reclaimed:
		return l, MarkReclaim
	case e.Kind == engine.EvTake:
		return l, MarkTake
	}
	return l, MarkClaim
}

// finalizeMark is the mark of a finalize with outcome o: rejected, a violation, or done.
func finalizeMark(o string) rune {
	switch o {
	case engine.OutcomeRejected:
		return markRejected
	case engine.OutcomeViolation:
		return markViolate
	}
	return markFinal
}

// finish marks every lease on key as done from column c on: the row is Processed.
func (st *spaceTime) finish(key string, c int) {
	for _, l := range st.Leases {
		if l.Key == PlainText(key) && l.Start <= c && c < l.End && !l.done {
			l.fills = append(l.fills, stFill{c, fillDone})
			l.done = true
		}
	}
}

// setFill changes a live bar's fill from column c on; a finished bar stays finished.
func (l *stLease) setFill(c int, r rune) {
	if l == nil || l.done || c >= l.End {
		return
	}
	l.fills = append(l.fills, stFill{c, r})
}

// fillAt is the bar's fill at column c.
func (l *stLease) fillAt(c int) rune {
	r := fillHeld
	for _, f := range l.fills {
		if f.col <= c {
			r = f.fill
		}
	}
	return r
}

// PlainText makes text read from the database safe to print: control characters become '?'.
func PlainText(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}
