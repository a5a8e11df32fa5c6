package room

import (
	"context"
	"errors"
	"fmt"

	"leaselab/engine"
)

// Seat is one attendee of the room: a name (their SSH user, made unique and escaped: it is what
// their worker writes to LockedBy) and the worker that acts for them. While they are away
// (disconnected, idle past the room's limit, or gone with q) their worker has crashed to the
// room: one that held a message is frozen with it, as a closed laptop is, and the row stays
// Processing under their name until the lease ends. When they come back they get a fresh worker;
// the frozen one may still try what it was about to do (Finish): its stale finalize is the
// guards' to refuse.
type Seat struct {
	r    *Room
	name string

	// Guarded by r.mu: written with it held exclusively, read with it held either way.
	present     bool
	away        Away
	cur         int // the worker acting for the attendee now (an index in the session), -1: none
	stale       int // an earlier worker, frozen holding a message from before the attendee left, -1: none
	incarnation int // how many workers the attendee has had in this round
	actions     int // actions the attendee's keys did (for their screen)
}

// Away says why an attendee is away.
type Away string

// Reasons to be away.
const (
	AwayDisconnected Away = "connection dropped"
	AwayIdle         Away = "idle past the room's limit"
	AwayLeft         Away = "left the room"
)

// Join seats an attendee: user is their SSH user name, made unique and escaped. A name whose
// attendee is away is theirs again (a reconnection: Back). It refuses a new attendee once the
// room has MaxSeats.
func (r *Room) Join(ctx context.Context, user string) (*Seat, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	name := CleanName(user)
	for n := 2; ; n++ {
		s := r.seatLocked(name)
		if s == nil {
			break
		}
		if !s.present {
			err := s.backLocked(ctx)
			r.changed()
			return s, err
		}
		if n > r.cfg.MaxSeats+1 {
			return nil, fmt.Errorf("no free name like %s", name)
		}
		name = suffixed(CleanName(user), n)
	}
	if len(r.seats) >= r.cfg.MaxSeats {
		return nil, fmt.Errorf("the room has seen %d attendees, the most it keeps: come back with the SSH user name you had (ssh NAME@…), or ask the teacher to reset it", len(r.seats))
	}
	s := &Seat{r: r, name: name, present: true, cur: -1, stale: -1}
	if err := s.startLocked(ctx); err != nil {
		return nil, err
	}
	r.seats = append(r.seats, s)
	r.note(fmt.Sprintf("%s joined the room", name))
	r.changed()
	return s, nil
}

// Name is the attendee's name in the room: their worker's LockedBy.
func (s *Seat) Name() string { return s.name }

// workerName is the name of the attendee's worker number n of the round: their own name for
// the first, "ana#2" and so on for the workers after a return (names never have '#').
func (s *Seat) workerName(n int) string {
	if n <= 1 {
		return s.name
	}
	return fmt.Sprintf("%s#%d", s.name, n)
}

// startLocked gives the seat a fresh worker in the session. r.mu must be held exclusively.
func (s *Seat) startLocked(ctx context.Context) error {
	r := s.r
	if len(r.sess.Workers()) >= r.cfg.MaxWorkers {
		return fmt.Errorf("the room's session holds %d workers, the most it runs: the teacher may reset it (R)", len(r.sess.Workers()))
	}
	s.incarnation++
	i, err := r.sess.Crew().Join(ctx, s.workerName(s.incarnation), s.name)
	if err != nil {
		return err
	}
	s.cur = i
	return nil
}

// Result is what one of an attendee's keys did.
type Result struct {
	Event  engine.Event // the action's event (its Text is the sentence), when Acted
	Acted  bool
	Busy   bool   // the database stayed busy: nothing happened, press again
	Why    string // when nothing happened: why, in words
	Worker string // the worker that acted
}

// Step does the attendee's worker's next action: a claim (or a load, or a select, as the
// settings make it), the provider call, a heartbeat, the finalize; for a crashed worker, a
// restart. It runs alongside the other attendees' actions.
func (s *Seat) Step(ctx context.Context) (Result, error) {
	r := s.r
	r.mu.RLock()
	defer r.mu.RUnlock()
	if err := s.mayActLocked(s.cur, errNoWorker); err != nil {
		return Result{}, err
	}
	w := r.sess.Workers()[s.cur]
	if w.View().Crashed {
		ev, err := r.sess.Crew().Restart(ctx, s.cur)
		if err != nil {
			return Result{}, err
		}
		s.counted()
		r.changed()
		return Result{Event: ev, Acted: true, Worker: w.Name}, nil
	}
	return s.act(ctx, w)
}

// errNoWorker is Step's when the attendee has no worker in this round (the room was full).
var errNoWorker = fmt.Errorf("you have no worker in this round: %w", engine.ErrNotNow)

// mayActLocked says why the seat's worker i may not act now (none: nil); none is the error
// for i < 0. r.mu must be held, either way.
func (s *Seat) mayActLocked(i int, none error) error {
	switch r := s.r; {
	case r.closed:
		return ErrClosed
	case r.paused:
		return ErrPaused
	case !s.present:
		return ErrAway
	case i < 0:
		return none
	}
	return nil
}

// act does w's next action for the seat and records it. r.mu must be held, either way.
func (s *Seat) act(ctx context.Context, w *engine.Worker) (Result, error) {
	r := s.r
	st := r.sess.Settings()
	ev, acted, err := w.Step(ctx)
	res := Result{Event: ev, Acted: acted, Worker: w.Name}
	if err != nil {
		return res, err
	}
	if !acted {
		res.Busy = ev.Outcome == "busy"
		res.Why = s.whyNothing(w)
		return res, nil
	}
	v := w.View()
	r.lmu.Lock()
	r.led.observe(s.name, w.Name, ev, v.HoldingVersion, st)
	r.lmu.Unlock()
	s.counted()
	r.changed()
	return res, nil
}

// counted counts an action of the attendee's keys. The seat's own goroutine is the only one
// that steps it, so the count needs no lock of its own beyond the room's.
func (s *Seat) counted() {
	s.r.lmu.Lock()
	s.actions++
	s.r.lmu.Unlock()
}

// whyNothing says why w had nothing to do.
func (s *Seat) whyNothing(w *engine.Worker) string {
	v := w.View()
	if t := w.Timer(); !t.IsZero() {
		return fmt.Sprintf("%s is %s: nothing to do before %s, when the teacher moves the clock", v.Name, v.State, engine.FormatClock(t))
	}
	return fmt.Sprintf("%s has nothing to do (%s)", v.Name, v.State)
}

// Leave marks the attendee away: their worker has crashed to the room. One that holds a message
// is frozen with it (paused: its memory kept, its row Processing under the attendee's name until
// the lease ends); one that holds nothing is crashed. Leaving twice is harmless.
func (s *Seat) Leave(why Away) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if !s.present || r.closed {
		return
	}
	s.present, s.away = false, why
	text := fmt.Sprintf("%s is away (%s): to the room, %s's worker has crashed", s.name, why, s.name)
	if s.cur >= 0 {
		w := r.sess.Workers()[s.cur]
		v := w.View()
		switch {
		case v.Crashed:
			r.note(text)
		case w.Holds():
			if v.Holding != "" {
				text += fmt.Sprintf("; %s stays Processing under %s (lease version %d) until its lease ends, and %s is frozen holding it",
					v.Holding, s.name, v.HoldingVersion, v.Name)
			}
			if ev, err := r.sess.Crew().Freeze(s.cur, text); err == nil {
				r.lmu.Lock()
				r.led.away(s.name, why, ev)
				r.lmu.Unlock()
			}
		default:
			_, _ = r.sess.Crew().Crash(s.cur)
			r.note(text)
		}
	}
	r.changed()
}

// Back brings an away attendee back with a fresh worker (a connection of its own, a new lease
// version on its next claim). Their frozen worker, if they left holding a message, stays frozen
// as their stale one: Finish lets it try what it was about to do.
func (s *Seat) Back(ctx context.Context) error {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.present || r.closed {
		return nil
	}
	err := s.backLocked(ctx)
	r.changed()
	return err
}

// backLocked is Back; r.mu must be held exclusively.
func (s *Seat) backLocked(ctx context.Context) error {
	r := s.r
	s.present, s.away = true, ""
	if s.cur < 0 {
		return s.startLocked(ctx)
	}
	v := r.sess.Workers()[s.cur].View()
	if !v.Paused || len(r.sess.Workers()) >= r.cfg.MaxWorkers {
		// Nothing held (its worker crashed), or no room for another worker: the same worker
		// restarts with empty memory and a new connection.
		if v.Paused {
			_, _ = r.sess.Crew().Crash(s.cur)
		}
		_, err := r.sess.Crew().Restart(ctx, s.cur)
		r.note(fmt.Sprintf("%s is back: %s restarts with a new connection and empty memory", s.name, v.Name))
		return err
	}
	if s.stale >= 0 {
		_, _ = r.sess.Crew().Crash(s.stale) // an older frozen worker: its chance is gone
	}
	s.stale = s.cur
	if err := s.startLocked(ctx); err != nil {
		s.cur, s.stale = s.stale, -1
		return err
	}
	r.note(fmt.Sprintf("%s is back with a fresh worker, %s; %s, frozen holding %s (lease version %d), may still try what it was about to do",
		s.name, r.sess.Workers()[s.cur].Name, v.Name, v.Holding, v.HoldingVersion))
	return nil
}

// Present reports whether the attendee is in the room (not away).
func (s *Seat) Present() bool {
	s.r.mu.RLock()
	defer s.r.mu.RUnlock()
	return s.present
}

// ErrNoStale is Finish's when the attendee has no worker from before.
var ErrNoStale = fmt.Errorf("no worker of yours from before is waiting to finish: %w", engine.ErrNotNow)

// Finish lets the attendee's stale worker — frozen holding a message when they left — wake and
// take its next action, as a laptop opened again goes on where it stopped: the provider call,
// then its finalize, which the guards refuse when the lease has moved on. Once it holds nothing
// it is retired (crashed: its connection closed).
func (s *Seat) Finish(ctx context.Context) (Result, error) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := s.mayActLocked(s.stale, ErrNoStale); err != nil {
		return Result{}, err
	}
	w := r.sess.Workers()[s.stale]
	if w.View().Paused {
		if _, err := r.sess.Crew().SetPaused(s.stale, false); err != nil {
			return Result{}, err
		}
	}
	res, err := s.act(ctx, w)
	if err == nil && !w.Holds() {
		if _, cerr := r.sess.Crew().Crash(s.stale); cerr != nil && !errors.Is(cerr, engine.ErrNotNow) {
			err = cerr
		}
		s.stale = -1
		r.changed()
	}
	return res, err
}

// note writes a sentence into the room's timeline. r.mu must be held exclusively.
func (r *Room) note(text string) { r.sess.Crew().Note(text) }
