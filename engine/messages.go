package engine

import (
	"math"
	"time"

	"leaselab/engine/internal/keyed"
)

// msgRec is what the ledger keeps of one message, as the events arrive, in 32 bytes and no
// pointer: its processing attempts and committed finalizes counted, whether a finalize wrote it
// without owning it, and, for the common message (one lease, one attempt, at whole
// milliseconds within 24 days of the run's first time), that lease and that attempt
// themselves. A message that has more (a second attempt, a second lease, a renewal by another
// worker, a time or a version that does not fit) keeps them in a msgSpill instead.
type msgRec struct {
	attemptAt         int32  // the first attempt's time, in ms after the table's base
	spanAt, spanUntil int32  // the lease: when taken, the latest end it and its renewals gave it
	attemptVer        uint32 // the lease version the first attempt held
	spanVer           uint32 // the lease's version
	attempts, commits uint16 // saturating at 65535: see messages.commitsOf for the exact count
	attemptW, spanW   uint16 // the worker of the first attempt and of the lease, 1-based
	flags             uint8
}

const (
	recSpan     uint8 = 1 << iota // spanVer/spanAt/spanUntil/spanW hold the message's one lease
	recSpilled                    // the attempts and leases are in the ledger's spill map
	recViolated                   // a finalize wrote it without owning the row
)

// msgSpill is a message's attempts and leases in full, for the messages that have more than
// msgRec holds: every attempt, the span of each lease version, and per worker the version it
// last took and the lease end it last set.
type msgSpill struct {
	attempts []Attempt
	spans    []versionSpan
	workers  []workerLease
	// freed are the lease versions taken after the one before them was released to Pending, and
	// when it was (messages.freed).
	freed []versionSpan
}

// versionSpan is one lease version on a message and its span.
type versionSpan struct {
	version   int64
	at, until time.Time
}

// workerLease is one worker's leases on a message: the version it last took (0: none), and the
// end of the last lease it set or renewed (zero: none), which a crash's record reads.
type workerLease struct {
	worker string
	held   int64
	until  time.Time
}

func (s *msgSpill) span(version int64) *versionSpan {
	for i := range s.spans {
		if s.spans[i].version == version {
			return &s.spans[i]
		}
	}
	return nil
}

// spanFrom is lease version v's span as the overlap test judges it: from when it was taken, or
// from the release of the version before it, whichever is later.
func (s *msgSpill) spanFrom(v int64) *versionSpan {
	sp := s.span(v)
	if sp == nil {
		return nil
	}
	for _, f := range s.freed {
		if f.version == v && f.at.After(sp.at) {
			c := *sp
			c.at = f.at
			return &c
		}
	}
	return sp
}

func (s *msgSpill) worker(name string) *workerLease {
	for i := range s.workers {
		if s.workers[i].worker == name {
			return &s.workers[i]
		}
	}
	s.workers = append(s.workers, workerLease{worker: name})
	return &s.workers[len(s.workers)-1]
}

// messages is the ledger's per-message state: one msgRec per key, and the spills.
type messages struct {
	recs  *keyed.Table[msgRec]
	spill map[string]*msgSpill
	names []string          // worker names by index (1-based in msgRec)
	index map[string]uint16 // worker name -> 1-based index
	base  int64             // UnixNano of the first time recorded; msgRec's times count from it
	based bool
	more  map[string]int // commits beyond what msgRec.commits holds
}

func newMessages(n int) *messages {
	return &messages{recs: keyed.New[msgRec](min(n, MaxMessages)), spill: map[string]*msgSpill{}, index: map[string]uint16{}, more: map[string]int{}}
}

// ms is t in whole milliseconds after the base, when it is exactly that and fits msgRec.
func (m *messages) ms(t time.Time) (int32, bool) {
	if !inNanos(t) {
		return 0, false
	}
	ns := t.UnixNano()
	if !m.based {
		m.base, m.based = ns, true
	}
	d := ns - m.base
	if d%int64(time.Millisecond) != 0 || d/int64(time.Millisecond) > math.MaxInt32 || d/int64(time.Millisecond) < math.MinInt32 {
		return 0, false
	}
	return int32(d / int64(time.Millisecond)), true
}

// at is the time ms milliseconds after the base.
func (m *messages) at(ms int32) time.Time {
	return time.Unix(0, m.base+int64(ms)*int64(time.Millisecond)).UTC()
}

// counted adds one to a saturating count.
func counted(n uint16) uint16 {
	if n < math.MaxUint16 {
		n++
	}
	return n
}

// commit counts a committed finalize of key; it reports whether it was the key's first.
func (m *messages) commit(key string) bool {
	r := m.recs.At(key)
	if r.commits == math.MaxUint16 {
		m.more[key]++
	}
	r.commits = counted(r.commits)
	return r.commits == 1
}

// commitsOf is the exact number of committed finalizes of key.
func (m *messages) commitsOf(key string, r *msgRec) int {
	n := int(r.commits)
	if n == math.MaxUint16 {
		n += m.more[key]
	}
	return n
}

// workerIndex is the 1-based index of a worker name; 0 when there are too many to number.
func (m *messages) workerIndex(name string) uint16 {
	if i, ok := m.index[name]; ok {
		return i
	}
	if len(m.names) >= math.MaxUint16 {
		return 0
	}
	m.names = append(m.names, name)
	m.index[name] = uint16(len(m.names))
	return uint16(len(m.names))
}

// spillOf moves key's attempt and lease out of r into the spill map, once.
func (m *messages) spillOf(key string, r *msgRec) *msgSpill {
	if r.flags&recSpilled != 0 {
		return m.spill[key]
	}
	s := &msgSpill{}
	if r.attempts > 0 {
		s.attempts = append(s.attempts, Attempt{Worker: m.names[r.attemptW-1], At: m.at(r.attemptAt), Version: int64(r.attemptVer)})
	}
	if r.flags&recSpan != 0 {
		until := m.at(r.spanUntil)
		s.spans = append(s.spans, versionSpan{version: int64(r.spanVer), at: m.at(r.spanAt), until: until})
		s.workers = append(s.workers, workerLease{worker: m.names[r.spanW-1], held: int64(r.spanVer), until: until})
	}
	r.flags = r.flags&^recSpan | recSpilled
	m.spill[key] = s
	return s
}

// freed records that key's lease version v was released to Pending at t, by a guarded write:
// its owner's release after a failed attempt, or a guarded rescue of a lease that had ended.
// The next lease (v+1, a claim adds one) was taken from the Pending row that write committed:
// it began after t, whatever time its claim was stamped with. A free-running claimer's stamp
// may be older than the release (it read the clock, then the clock moved on before its
// statement saw the row): judged from its stamp alone, it would look like a second owner of a
// lease that had ended. t is a scenario time, read before the write committed.
func (m *messages) freed(key string, v int64, t time.Time) {
	s := m.spillOf(key, m.recs.At(key))
	s.freed = append(s.freed, versionSpan{version: v + 1, at: t})
}

// attempt records a processing attempt.
func (m *messages) attempt(key string, a Attempt) {
	r := m.recs.At(key)
	if r.attempts == 0 && r.flags&recSpilled == 0 && a.Version >= 0 && a.Version <= math.MaxUint32 {
		w := m.workerIndex(a.Worker)
		if at, ok := m.ms(a.At); ok && w != 0 {
			r.attemptW, r.attemptVer, r.attemptAt, r.attempts = w, uint32(a.Version), at, 1
			return
		}
	}
	s := m.spillOf(key, r) // moves the first attempt, if it was kept in r
	s.attempts = append(s.attempts, a)
	r.attempts = counted(r.attempts)
}

// inNanos reports whether t survives a trip through UnixNano.
func inNanos(t time.Time) bool {
	return t.Year() > 1678 && t.Year() < 2262
}

// observe takes the next event, in the order events are recorded: the lease it set or renewed,
// and an ownership violation.
func (m *messages) observe(e Event) {
	if e.Key == "" {
		return
	}
	switch {
	case e.Kind == EvFinalize && e.Outcome == OutcomeViolation:
		m.recs.At(e.Key).flags |= recViolated
	case e.Kind == EvRenew && e.Outcome == OutcomeRenewed:
		r := m.recs.At(e.Key)
		if r.flags&recSpan != 0 && m.index[e.Worker] == r.spanW && r.spanW != 0 {
			// The lease's own worker renews it: its span and the end the worker last set are
			// the same time as long as each renewal extends it.
			if u, ok := m.ms(e.Until); ok && u >= r.spanUntil {
				r.spanUntil = u
				return
			}
		}
		s := m.spillOf(e.Key, r)
		w := s.worker(e.Worker)
		if sp := s.span(w.held); sp != nil && e.Until.After(sp.until) {
			sp.until = e.Until // a renewal extends the lease its worker holds (same version)
		}
		w.until = e.Until
	case e.SetsLease():
		r := m.recs.At(e.Key)
		if r.flags&(recSpan|recSpilled) == 0 && e.Version > 0 && e.Version <= math.MaxUint32 {
			w := m.workerIndex(e.Worker)
			at, okAt := m.ms(e.At)
			until, okUntil := m.ms(e.Until)
			if w != 0 && okAt && okUntil {
				r.flags |= recSpan
				r.spanVer, r.spanW, r.spanAt, r.spanUntil = uint32(e.Version), w, at, until
				return
			}
		}
		s := m.spillOf(e.Key, r)
		w := s.worker(e.Worker)
		w.until = e.Until
		if e.Version > 0 {
			w.held = e.Version
			if sp := s.span(e.Version); sp != nil {
				sp.at, sp.until = e.At, e.Until
			} else {
				s.spans = append(s.spans, versionSpan{version: e.Version, at: e.At, until: e.Until})
			}
		}
	}
}

// leaseEnd is the end of the last lease worker set or renewed on key; zero when none.
func (m *messages) leaseEnd(key, worker string) time.Time {
	r := m.recs.Get(key)
	switch {
	case r.flags&recSpan != 0:
		if r.spanW != 0 && m.names[r.spanW-1] == worker {
			return m.at(r.spanUntil)
		}
	case r.flags&recSpilled != 0:
		for _, w := range m.spill[key].workers {
			if w.worker == worker {
				return w.until
			}
		}
	}
	return time.Time{}
}

// attemptsOf returns key's attempts, in order.
func (m *messages) attemptsOf(key string, r *msgRec) []Attempt {
	switch {
	case r.flags&recSpilled != 0:
		return m.spill[key].attempts
	case r.attempts > 0:
		return []Attempt{{Worker: m.names[r.attemptW-1], At: m.at(r.attemptAt), Version: int64(r.attemptVer)}}
	}
	return nil
}

// processedSince counts key's attempts under lease version v or a later one.
func (m *messages) processedSince(key string, v int64) int {
	r := m.recs.Get(key)
	n := 0
	for _, a := range m.attemptsOf(key, &r) {
		if a.Version >= v {
			n++
		}
	}
	return n
}
