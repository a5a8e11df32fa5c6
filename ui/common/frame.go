package common

import (
	"context"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
)

// eventTail is how many of the latest events a frame carries for the event log.
const eventTail = 200

// Frame is what one engine command read back after it acted (engine.Frame, the engine's read
// model of the session), its text from the database escaped for the terminal; or what the watch
// read. View renders frames and nothing else.
type Frame struct {
	engine.Frame
	// Watch marks a frame the watch read from a database other processes work on: no session,
	// no ledger; Workers are the LockedBy values seen, for their colours.
	Watch bool
}

// Capture reads a frame from s (Session.Snapshot) and escapes what it quotes from the
// database. It does I/O: call it only from a tea.Cmd.
func Capture(ctx context.Context, s *engine.Session) (*Frame, error) {
	f, err := s.Snapshot(ctx, eventTail)
	if err != nil {
		return nil, err
	}
	f.Rows = SafeRows(f.Rows)
	if r := f.Rescuer; r != nil {
		for i, e := range r.Read {
			r.Read[i].IdempotencyKey, r.Read[i].LockedBy = words.Escape(e.IdempotencyKey), words.Escape(e.LockedBy)
		}
	}
	for k, e := range f.LastErrors {
		f.LastErrors[k] = words.Escape(e)
	}
	for i, v := range f.Workers {
		f.Workers[i] = safeWorker(v)
	}
	if f.Summary != nil {
		f.Summary.DidNotFinish = words.Escape(f.Summary.DidNotFinish) // it may name the scenario's file
	}
	return &Frame{Frame: *f}, nil
}

// EarliestLease is the end of the earliest live lease in the frame, zero when none.
func (f *Frame) EarliestLease() time.Time {
	var t time.Time
	for _, r := range f.Rows {
		if r.Status == engine.StatusProcessing && !r.LockedUntil.Before(f.Now) && (t.IsZero() || r.LockedUntil.Before(t)) {
			t = r.LockedUntil
		}
	}
	return t
}

// WorkerIndex maps LockedBy values and worker names to the worker's position, for colours.
func (f *Frame) WorkerIndex() map[string]int {
	m := make(map[string]int, 2*len(f.Workers))
	for i, w := range f.Workers {
		m[w.Name], m[w.ID] = i, i
	}
	return m
}
