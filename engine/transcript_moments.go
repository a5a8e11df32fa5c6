package engine

import (
	"context"
	"sync"
)

// Moment is the outbox table as the database held it right after one event: the moments a
// transcript shows it (claims, crashes, blocked claims, clock moves, takes, rejected or stale
// finalizes).
type Moment struct {
	Seq  int   // the event's Seq
	Rows []Row // Snapshot right after it
	Err  error // the snapshot could not be read
}

// moments is what RecordMoments keeps.
type moments struct {
	mu   sync.Mutex
	list []Moment
}

// IsMoment reports whether a transcript shows the outbox table after e.
func IsMoment(e Event) bool {
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

// RecordMoments makes the session read the outbox table right after every event IsMoment
// picks, for the transcript (Moments). Turn it on before the first action; it costs one read of
// the table per such event, on the database's reader.
func (s *Session) RecordMoments() {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	if s.env.moments != nil {
		return
	}
	s.env.moments = &moments{}
	m, db := s.env.moments, s.db
	s.ledger.onRecord = func(e Event) {
		if !IsMoment(e) {
			return
		}
		rows, err := db.Snapshot(context.Background())
		m.mu.Lock()
		m.list = append(m.list, Moment{Seq: e.Seq, Rows: rows, Err: err})
		m.mu.Unlock()
	}
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
