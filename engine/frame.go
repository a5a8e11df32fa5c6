package engine

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Frame is a session read back at one instant, after a command: the rows as the database holds
// them and a copy of the session's memory. It is the engine's read model of a session: the lab
// draws frames and nothing else, so the screen never shows a copy of the outbox kept aside.
type Frame struct {
	Name     string // scenario name
	Title    string
	Explain  []string
	Incident *Incident // the lesson's incident card, nil for most (incident.go)
	DBPath   string
	Settings Settings
	Teaches  string // the toggle the lesson is about, if any
	// RowLocks: the database locks rows (PostgreSQL), so skip-locked is a toggle of this lab.
	RowLocks bool
	// LessonToggles names the toggles of the registry's other groups (InRetries, InRescue) the
	// run uses (Probe.UsesToggle), in the registry's order: the lab shows them and their keys.
	LessonToggles []string
	Now           time.Time

	Rows     []Row
	Workers  []WorkerView
	Ledgers  []WorkerLedger // one per worker, in the order of Workers
	Total    WorkerLedger
	Attempts map[string][]Attempt // processing attempts per message key
	// LastErrors is each dead-lettered row's LastError, by key, as the database holds it (a
	// store that is a RetryReader); nil when no row is dead-lettered.
	LastErrors map[string]string

	// Rescuer is the rescuer's view, nil when the scenario has none.
	Rescuer *RescuerView

	Events     []Event // the latest events, oldest first
	EventCount int

	Summary *Summary
	Done    bool

	ScriptIndex, ScriptTotal int
	// Observed are the answers the run gave to the script's questions whose steps have started
	// (the observer): what each step did, and the answer that makes right.
	Observed []Observed
	// NextTimer is the earliest time at which a worker will have something to do without anyone
	// acting (a provider answer, a heartbeat, a blocking lease's end); zero when none.
	NextTimer time.Time
}

// Snapshot reads the session's frame, with the latest events (at most that many): the rows
// and the counts from the database, the rest from the session's memory. It does I/O. Like every
// Session method, it is not safe to call while a command runs.
func (s *Session) Snapshot(ctx context.Context, events int) (*Frame, error) {
	rows, err := s.db.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the outbox: %w", err)
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		return nil, fmt.Errorf("summarize: %w", err)
	}
	led := s.ledger
	f := &Frame{
		Name: s.Scenario.Name, Title: s.Scenario.Title, Explain: s.Scenario.Explain, Incident: s.Scenario.Incident,
		DBPath: s.db.Path(), Settings: s.Settings(),
		Teaches: s.Scenario.Teaches, RowLocks: s.env.caps.RowLocks, LessonToggles: s.view().lessonToggles(), Now: s.clock.Now(),
		Rows: rows, Total: led.Total(), Attempts: led.Attempts(),
		EventCount: led.EventCount(), Summary: sum, Done: s.Done(),
	}
	f.Events = led.EventsSince(max(0, f.EventCount-events))
	_, f.ScriptIndex, f.ScriptTotal = s.script.Position()
	if f.Done && s.script.freeRan {
		// The free run ended the script: its questions about the end are known now.
		if err := s.script.asked.atEnd(ctx, sum); err != nil {
			return nil, err
		}
	}
	f.Observed = s.script.asked.list()
	for _, w := range s.crew.workers {
		v := w.View()
		f.Workers = append(f.Workers, v)
		f.Ledgers = append(f.Ledgers, led.Worker(v.Name))
	}
	f.NextTimer = s.crew.NextTimer()
	f.Rescuer = s.rescuer.view()
	if f.LastErrors, err = lastErrors(ctx, s.env.caps.Retry, rows); err != nil {
		return nil, err
	}
	return f, nil
}

// lastErrors reads the LastError of each dead-lettered row, by key; nil when none is or the
// store cannot say.
func lastErrors(ctx context.Context, rr RetryReader, rows []Row) (map[string]string, error) {
	if rr == nil {
		return nil, nil
	}
	var m map[string]string
	for _, r := range rows {
		if r.Status != StatusDeadLettered {
			continue
		}
		st, err := rr.RetryState(ctx, r.IdempotencyKey)
		if err != nil {
			return nil, fmt.Errorf("read the retry state of %s: %w", r.IdempotencyKey, err)
		}
		if m == nil {
			m = map[string]string{}
		}
		m[r.IdempotencyKey] = st.LastError
	}
	return m, nil
}

// RescuerView is the rescuer as the lab shows it: its name and schedule, the expired leases its
// last sweep read and has not rescued yet (as it holds them: key, owner, version), and its
// counts so far.
type RescuerView struct {
	Name   string
	Every  time.Duration
	Read   []Expired
	Counts RescuerSummary
}

// view is the rescuer now, nil without one.
func (r *Rescuer) view() *RescuerView {
	if r == nil {
		return nil
	}
	return &RescuerView{Name: r.Name, Every: r.every, Read: slices.Clone(r.seen), Counts: r.counts}
}
