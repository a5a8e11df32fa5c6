package ui

import (
	"context"
	"fmt"
	"time"

	"leaselab/engine"
)

// eventTail is how many of the latest events a frame carries for the event log.
const eventTail = 200

// frame is what one engine command read back after it acted: the rows as the database holds
// them and a copy of the session's memory, at one instant. View renders frames and nothing else,
// so the screen never shows a copy of the outbox that the lab keeps for itself.
type frame struct {
	Name     string // scenario name
	Title    string
	Explain  []string
	DBPath   string
	Settings engine.Settings
	Teaches  string // the toggle the lesson is about, if any
	// RowLocks: the database locks rows (PostgreSQL), so skip-locked is a toggle of this lab.
	RowLocks bool
	Now      time.Time

	Rows     []engine.Row
	Workers  []engine.WorkerView
	Ledgers  []engine.WorkerLedger // one per worker, in the order of Workers
	Total    engine.WorkerLedger
	Attempts map[string][]engine.Attempt // processing attempts per message key

	Events     []engine.Event // the latest events, oldest first
	EventCount int

	Summary *engine.Summary
	Done    bool

	ScriptIndex, ScriptTotal int
	// NextTimer is the earliest time at which a worker will have something to do without anyone
	// acting (a provider answer, a heartbeat, a blocking lease's end); zero when none.
	NextTimer time.Time

	// Watch marks a frame the watch read from a database other processes work on: no session,
	// no ledger; Workers are the LockedBy values seen, for their colours.
	Watch bool
}

// capture reads a frame from s: the snapshot and the counts from the database, the rest from
// the session's memory. It does I/O: call it only from a tea.Cmd.
func capture(ctx context.Context, s *engine.Session) (*frame, error) {
	rows, err := s.DB().Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the outbox: %w", err)
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		return nil, fmt.Errorf("summarize: %w", err)
	}
	led := s.Ledger()
	f := &frame{
		Name: s.Scenario.Name, Title: s.Scenario.Title, Explain: s.Scenario.Explain,
		DBPath: s.DB().Path(), Settings: s.Settings(),
		Teaches: s.Scenario.Teaches, RowLocks: engine.HasRowLocks(s.DB()), Now: s.Clock().Now(),
		Rows: safeRows(rows), Total: led.Total(), Attempts: led.Attempts(),
		EventCount: led.EventCount(), Summary: sum, Done: s.Done(),
	}
	f.Events = led.EventsSince(max(0, f.EventCount-eventTail))
	_, f.ScriptIndex, f.ScriptTotal = s.ScriptPosition()
	for _, w := range s.Workers() {
		v := safeWorker(w.View())
		f.Workers = append(f.Workers, v)
		f.Ledgers = append(f.Ledgers, led.Worker(v.Name))
	}
	f.NextTimer = s.NextTimer()
	return f, nil
}

// earliestLease is the end of the earliest live lease in the frame, zero when none.
func (f *frame) earliestLease() time.Time {
	var t time.Time
	for _, r := range f.Rows {
		if r.Status == engine.StatusProcessing && !r.LockedUntil.Before(f.Now) && (t.IsZero() || r.LockedUntil.Before(t)) {
			t = r.LockedUntil
		}
	}
	return t
}

// workerIndex maps LockedBy values and worker names to the worker's position, for colours.
func (f *frame) workerIndex() map[string]int {
	m := make(map[string]int, 2*len(f.Workers))
	for i, w := range f.Workers {
		m[w.Name], m[w.ID] = i, i
	}
	return m
}
