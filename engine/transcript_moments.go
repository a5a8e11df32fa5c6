package engine

import (
	"context"
	"sync"
)

// A handout reads well whatever the length of the run. A short run (every lesson of six
// messages) is shown whole: every event with its SQL, the outbox table at every moment. A long
// one (a free run of 500 messages) shows its first handoutHead events in full, then only the
// events that teach (Teaches), at most handoutTeach of them, and counts the routine steps in
// between. A table of at most handoutWholeTable rows is shown whole; a larger one as the rows
// around the message involved, the others counted by status. So a handout's size, and the
// memory its moments take while a run goes on, do not grow with the run.
const (
	handoutHead       = 60
	handoutTeach      = 60 // of the events a lease is for (Teaches, not Frames)
	handoutFrame      = 30 // of the events that frame them (Frames)
	handoutWholeTable = 24
	handoutAround     = 2  // rows shown on each side of a row involved
	handoutExcerpt    = 12 // rows of an excerpt at most
)

// Moment is the outbox table as the database held it right after one event: the moments a
// transcript shows it (claims, crashes, blocked claims, clock moves, takes, rejected or stale
// finalizes).
type Moment struct {
	Seq  int   // the event's Seq
	Rows []Row // the whole table, or (Excerpt) the rows around the rows involved
	// Total is the number of rows the table had; Hidden counts, by Status, those not in Rows.
	Total  int
	Hidden map[string]int
	Err    error // the snapshot could not be read
}

// Excerpt reports whether the moment keeps only some rows of its table.
func (m Moment) Excerpt() bool { return len(m.Rows) < m.Total }

// moments is what RecordMoments keeps.
type moments struct {
	mu   sync.Mutex
	plan HandoutPlan
	list []Moment
}

// isMoment reports whether a transcript shows the outbox table after e.
func isMoment(e Event) bool {
	switch e.Kind {
	case EvClaim:
		return e.Outcome != OutcomeEmpty
	case EvTake, EvCrash, EvClock:
		return true
	case EvFinalize:
		return e.Outcome != OutcomeCommitted
	}
	return false
}

// teaches reports whether a long run's handout still shows e after its first events: what a
// lease is for happens there (a crash, a pause, a clock move, a reclaim, a claim blocked by a
// live lease, a rejected or unguarded finalize, a lost heartbeat, a lease over before its
// provider call) and what frames the run (a phase, a note, a setting changed).
func teaches(e Event) bool {
	switch e.Kind {
	case EvCrash, EvRestart, EvPause, EvResume, EvClock, EvSetting, EvPhase, EvNote:
		return true
	case EvClaim:
		return e.Outcome == OutcomeReclaimed || e.Outcome == OutcomeBlocked
	case EvFinalize:
		return e.Outcome == OutcomeRejected || e.Outcome == OutcomeViolation
	case EvRenew:
		return e.Outcome == OutcomeLost
	case EvCheck:
		return e.Outcome == OutcomeExpired
	}
	return false
}

// frames reports whether e, which teaches, frames what a lease is for rather than being it: a
// pause and a wake-up, a restart, a setting, a phase, a note, a claim blocked by a live lease. A
// long run has many of them (a free run pauses workers again and again); they have a budget of
// their own, so that they never crowd out a crash or a reclaim.
func frames(e Event) bool {
	switch e.Kind {
	case EvPause, EvResume, EvRestart, EvSetting, EvPhase, EvNote:
		return true
	case EvClaim:
		return e.Outcome == OutcomeBlocked
	}
	return false
}

// HandoutPlan decides, event by event in the order of the run, which events a handout shows:
// the first handoutHead, then those that teach, at most handoutTeach of the events a lease is
// for and handoutFrame of those that frame them; of the claims blocked on one message, only the
// first (a polling worker meets the same live lease again and again). The recorder of moments
// and the writer each walk the run with one, so that they agree.
type HandoutPlan struct {
	taught, framed int
	blocked        map[string]bool
}

// Shows reports whether the handout shows e, and counts it.
func (p *HandoutPlan) Shows(e Event) bool {
	if e.Seq <= handoutHead {
		return true
	}
	if !teaches(e) {
		return false
	}
	if frames(e) {
		if p.framed >= handoutFrame {
			return false
		}
		if e.Kind == EvClaim && e.Outcome == OutcomeBlocked {
			if p.blocked == nil {
				p.blocked = map[string]bool{}
			}
			if p.blocked[e.Key] {
				return false
			}
			p.blocked[e.Key] = true
		}
		p.framed++
		return true
	}
	if p.taught >= handoutTeach {
		return false
	}
	p.taught++
	return true
}

// RecordMoments makes the session read the outbox table right after every event isMoment
// picks that the handout shows, for the transcript (Moments). Turn it on before the first
// action; it costs one read of the table per such event, on the database's reader, and at
// most handoutHead + handoutTeach + handoutFrame of them are read and kept, each of at most handoutExcerpt
// rows once the table is larger than handoutWholeTable.
func (s *Session) RecordMoments() {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	if s.env.moments != nil {
		return
	}
	s.env.moments = &moments{}
	m, db := s.env.moments, s.db
	s.ledger.onRecord = func(e Event) {
		m.mu.Lock()
		want := m.plan.Shows(e) && isMoment(e)
		m.mu.Unlock()
		if !want {
			return
		}
		rows, err := db.Snapshot(context.Background())
		mo := TableAt(rows, func(r Row) bool {
			return e.Key != "" && r.IdempotencyKey == e.Key || e.Key == "" && r.Status == StatusProcessing
		})
		mo.Seq, mo.Err = e.Seq, err
		m.mu.Lock()
		m.list = append(m.list, mo)
		m.mu.Unlock()
	}
}

// TableAt is the table as a handout keeps it: whole when it is small, else the rows around the
// rows involved (the first rows when none is), the others counted by status.
func TableAt(rows []Row, involved func(Row) bool) Moment {
	m := Moment{Rows: rows, Total: len(rows)}
	if len(rows) <= handoutWholeTable {
		return m
	}
	keep := make([]bool, len(rows))
	kept, found := 0, false
	for i, r := range rows {
		if !involved(r) {
			continue
		}
		found = true
		for j := max(0, i-handoutAround); j <= min(len(rows)-1, i+handoutAround) && kept < handoutExcerpt; j++ {
			if !keep[j] {
				keep[j] = true
				kept++
			}
		}
	}
	if !found {
		for j := 0; j <= 2*handoutAround; j++ {
			keep[j] = true
		}
	}
	m.Rows, m.Hidden = nil, map[string]int{}
	for i, r := range rows {
		if keep[i] {
			m.Rows = append(m.Rows, r)
		} else {
			m.Hidden[r.Status]++
		}
	}
	return m
}

// Moments are the tables RecordMoments read, by event Seq; nil when it is off.
func (s *Session) Moments() map[int]Moment {
	s.ledger.mu.Lock()
	ms := s.env.moments
	s.ledger.mu.Unlock()
	if ms == nil {
		return nil
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	out := make(map[int]Moment, len(ms.list))
	for _, m := range ms.list {
		out[m.Seq] = m
	}
	return out
}
