package room

import (
	"context"
	"fmt"
	"slices"
	"time"

	"leaselab/engine"
)

// Frame is the room read back at one instant: the outbox rows as the database holds them, every
// attendee and their worker, the room's ledgers, the question and its histogram, and the
// scoreboard so far. Every screen of the room — each attendee's and the teacher's — draws frames
// and nothing else; a frame is never changed once made, so one frame serves every screen.
type Frame struct {
	Seq      uint64 // Room.Seq when it was read
	Round    int    // 1, then one more after each reset
	Scenario string
	Title    string
	DBPath   string
	Messages int
	// ProviderCalls is the provider's own count of its calls.
	ProviderCalls int
	Settings      engine.Settings
	RowLocks      bool // the database locks rows (PostgreSQL): skip-locked is a toggle of the room
	Now           time.Time
	Paused        bool
	Ended         bool

	Rows   []engine.Row
	Counts RowCounts
	Seats  []SeatView // in the order they joined
	Ledger LedgerView
	// Question is the question asked last (nil: none yet), with its answers so far.
	Question *QuestionView
	Events   []string // the latest events of the room in words, oldest first
	Board    *Board
	// Summary is the engine's summary — its checks and its verdict — when the frame was asked
	// for one (FrameOptions.Summary); nil otherwise.
	Summary *engine.Summary
}

// RowCounts counts the rows by status.
type RowCounts struct{ Pending, Processing, Processed, Other int }

// SeatView is one attendee as the screens show them.
type SeatView struct {
	Name    string
	Present bool
	Away    Away
	// Their worker now: its name ("ana", "ana#2" after a return), its state in words, what it
	// holds and under which lease version.
	Worker          string
	State           string
	Holding         string
	Version         int64
	Next            engine.Action
	Crashed, Frozen bool
	// Their stale worker, frozen holding a message from before they left ("" when none).
	StaleWorker, StaleHolding, StaleState string
	StaleVersion                          int64
	StaleNext                             engine.Action

	Actions                        int // actions their keys did
	Claims, Reclaims               int // claims won (reclaims among them), all their workers
	Processed                      int // processing attempts (provider calls)
	Keys                           []string
	Finalized, Refused, Violations int
	Answer                         int // their answer to the question asked last, -1: none
}

// LedgerView is the room's ledgers as the screens show them.
type LedgerView struct {
	Calls int // processing attempts of all the attendees' workers
	// Duplicates are the messages processed by two owners at once; Again those processed
	// again after a lease ran out (at-least-once).
	Duplicates, Again []Duplicate
	Reclaims          []Reclaim
	Refused           []Finalize
	Violations        []Finalize
	Absences          []Absence
	// The counts of all of them (the lists keep the first maxExamples).
	NReclaims, NRefused, NViolations, NAbsences int
}

// FrameOptions say what a frame reads beyond the room's state.
type FrameOptions struct {
	// Events is how many of the latest events to put in words (0: none).
	Events int
	// Summary reads the engine's summary (its checks and verdict): it reads the database
	// several times, so the screens ask for it now and then, not at every frame.
	Summary bool
}

// Frame reads the room. It runs alongside the attendees' actions.
func (r *Room) Frame(ctx context.Context, opt FrameOptions) (*Frame, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return nil, ErrClosed
	}
	seq := r.seq.Load() // before the reads: a change during them makes a later frame
	s := r.sess
	rows, err := s.DB().Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the outbox: %w", err)
	}
	f := &Frame{Seq: seq, Round: r.round, Scenario: s.Scenario.Name, Title: s.Scenario.Title, DBPath: s.DB().Path(),
		Messages: s.Scenario.Messages, Settings: s.Settings(), RowLocks: s.DB().Capabilities().RowLocks, Now: s.Clock().Now(),
		Paused: r.paused, Ended: r.ended, Rows: rows}
	for _, row := range rows {
		switch row.Status {
		case engine.StatusPending:
			f.Counts.Pending++
		case engine.StatusProcessing:
			f.Counts.Processing++
		case engine.StatusProcessed:
			f.Counts.Processed++
		default:
			f.Counts.Other++
		}
	}
	if opt.Events > 0 {
		led := s.Ledger()
		for _, e := range led.EventsSince(max(0, led.EventCount()-opt.Events)) {
			f.Events = append(f.Events, e.String())
		}
	}
	now, initial := s.Settings(), s.InitialSettings()
	r.lmu.Lock()
	f.Ledger = r.led.view()
	f.Question = r.ask.view(now, initial)
	for _, st := range r.seats {
		f.Seats = append(f.Seats, r.seatView(st))
	}
	r.lmu.Unlock()
	f.ProviderCalls, _, _ = s.Provider().CallCounts()
	var sum *engine.Summary
	if opt.Summary {
		if sum, err = s.Summarize(ctx); err != nil {
			return nil, fmt.Errorf("summarize: %w", err)
		}
	}
	f.Judge(sum)
	return f, nil
}

// Judge gives the frame the engine's summary s (nil: none) and makes its scoreboard again: a
// screen that summarizes now and then carries the last summary into the frames between. Call
// it before the frame is shown: a frame is not changed after.
func (f *Frame) Judge(s *engine.Summary) {
	f.Summary = s
	f.Board = makeBoard(f)
}

// seatView copies one attendee; r.mu (either way) and r.lmu must be held.
func (r *Room) seatView(st *Seat) SeatView {
	v := SeatView{Name: st.name, Present: st.present, Away: st.away, Actions: st.actions, Answer: -1,
		Processed: r.led.processed[st.name], Keys: slices.Clone(r.led.keysBy[st.name])}
	if i, ok := r.ask.answers[st.name]; ok && r.ask.q != nil {
		v.Answer = i
	}
	ws := r.sess.Workers()
	if st.cur >= 0 {
		w := ws[st.cur].View()
		v.Worker, v.State, v.Holding, v.Version, v.Next = w.Name, w.State, w.Holding, w.HoldingVersion, w.Next
		v.Crashed, v.Frozen = w.Crashed, w.Paused
	}
	if st.stale >= 0 {
		w := ws[st.stale].View()
		v.StaleWorker, v.StaleHolding, v.StaleState, v.StaleVersion, v.StaleNext = w.Name, w.Holding, w.State, w.HoldingVersion, w.Next
	}
	for n := 1; n <= st.incarnation; n++ {
		l := r.sess.Ledger().Worker(st.workerName(n))
		v.Claims += l.ClaimsWon
		v.Reclaims += l.Reclaims
		v.Finalized += l.Finalized
		v.Refused += l.RejectedFinalizes
		v.Violations += l.OwnershipViolations
	}
	return v
}

// view copies the ledgers' lists and counts.
func (l *ledger) view() LedgerView {
	v := LedgerView{Calls: l.calls, Reclaims: slices.Clone(l.reclaims), Refused: slices.Clone(l.refused),
		Violations: slices.Clone(l.violations), Absences: slices.Clone(l.absences),
		NReclaims: l.counts.reclaims, NRefused: l.counts.refused, NViolations: l.counts.violations, NAbsences: l.counts.absences}
	for _, d := range l.duplicates() {
		if d.AtOnce {
			v.Duplicates = append(v.Duplicates, d)
		} else {
			v.Again = append(v.Again, d)
		}
	}
	return v
}

// Mine is the seat named name in f, and whether there is one.
func (f *Frame) Mine(name string) (SeatView, bool) {
	i := slices.IndexFunc(f.Seats, func(s SeatView) bool { return s.Name == name })
	if i < 0 {
		return SeatView{}, false
	}
	return f.Seats[i], true
}
