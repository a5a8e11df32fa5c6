package engine

import (
	"context"
	"fmt"
)

// Join adds a worker to a session that is already running, on a connection of its own: the
// shared room of `leaselab serve --shared` (engine/room), whose workers are the attendees and
// come and go. name is its display name and its ledger's, unique in the session; id is what it
// writes to LockedBy, which several workers may share (an attendee's later workers after a
// reconnection: the same owner to the database, new instances to the ledger). It returns the
// worker's index, for StepWorker, Crash, Restart and SetPaused.
//
// The new worker has the session's settings, clock, provider and ledger, and the same
// protocol and guards as the declared ones. Like every Session method, Join is not safe to call
// while another runs; a worker's own Step is (engine/room steps its workers concurrently and
// serialises Join against everything else).
func (s *Session) Join(ctx context.Context, name, id string) (int, error) {
	if name == "" || id == "" {
		return -1, fmt.Errorf("join: a worker needs a name and an id (got %q, %q)", name, id)
	}
	for _, w := range s.workers {
		if w.Name == name {
			return -1, fmt.Errorf("join %s: the session has a worker of that name already", name)
		}
	}
	spec := WorkerSpec{Short: name, ID: id}
	w := &Worker{Name: name, ID: id, Short: name, env: s.env, db: s.db, spec: spec}
	if err := w.connect(ctx); err != nil {
		return -1, err
	}
	s.workers = append(s.workers, w)
	s.env.world.Add(1) // a new worker may find work the others gave up on
	return len(s.workers) - 1, nil
}

// Freeze pauses worker i as an attendee who went away holding a message: it keeps its memory
// and still believes it owns what it holds, and takes no action until woken (SetPaused false),
// as a paused worker does; the event says why in words (the room's), not as a pause's sentence.
func (s *Session) Freeze(i int, why string) (Event, error) {
	return s.byWorker(i, func(w *Worker) (Event, error) {
		ev, err := w.setPaused(true)
		ev.Text = why
		return ev, err
	})
}
