// Package room is the shared room of `leaselab serve --shared`: one outbox on one database, one
// scenario's settings, clock and provider, and every attendee a worker of it, on a connection of
// their own, with the same protocol and guards as the lab's workers (engine.Worker, the store's
// guarded statements). Attendees join and leave; one who leaves while holding a message is, to the
// room, a crashed worker whose row stays Processing under their name until the lease ends, and who
// comes back as a fresh worker. The teacher holds the room: the toggles, the clock, a pause,
// crashes, a reset, and questions whose answers arrive as a histogram. The room keeps its own
// ledgers (duplicates and their causes, reclaims, refused and violating finalizes, absences) and
// puts what happened into words (Board); the checks and the verdict are the engine's.
//
// The package has no UI and no wall clock: the SSH side (ui/serve) paces the frames, watches
// idle attendees and draws.
package room

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"leaselab/engine"
)

// Opener opens the room's session: the scenario's outbox seeded afresh, with no workers of its
// own (the attendees join). The room calls it at New and at every Reset; it closes the session
// it opened before, and its database.
type Opener func(ctx context.Context) (*engine.Session, error)

// Config is what a room needs.
type Config struct {
	Open Opener
	// Close closes the last session Open opened and its database (nil: nothing to close).
	Close func() error
	// Questions are the ones the teacher may ask (the scenario's: QuestionsOf).
	Questions []Question
	// MaxSeats bounds the attendees the room keeps, present or away (0: DefaultMaxSeats);
	// MaxWorkers the workers of its session, the later workers of returning attendees
	// included (0: DefaultMaxWorkers). Past them a Join is refused until a Reset.
	MaxSeats, MaxWorkers int
	// OnChange is called after every change a screen shows; it must not block.
	OnChange func()
}

// Defaults of Config.
const (
	DefaultMaxSeats   = 64
	DefaultMaxWorkers = 256
)

// Errors a seat's action may return; each wraps engine.ErrNotNow.
var (
	ErrPaused = fmt.Errorf("the teacher has paused the room: %w", engine.ErrNotNow)
	ErrAway   = fmt.Errorf("your worker has crashed to the room: come back first: %w", engine.ErrNotNow)
	ErrClosed = errors.New("the room is closed")
)

// Room is the shared room. Its methods are safe for concurrent use: each attendee's action runs
// on the attendee's own goroutine and worker, concurrently with the others' (the store orders
// them on the write lock), while what changes the session's shape (a join, a crash, a toggle,
// the clock, a reset) waits for the actions in flight and runs alone.
type Room struct {
	cfg Config

	// mu: held shared by worker actions and frames, exclusively by everything else.
	mu     sync.RWMutex
	sess   *engine.Session
	round  int // 1, then one more at each Reset
	seats  []*Seat
	paused bool
	ended  bool // the teacher ended the round: paused, and the scoreboard shown
	closed bool

	// led and ask have their own lock: actions in flight (holding mu shared) write them.
	lmu sync.Mutex
	led *ledger
	ask asking

	seq atomic.Uint64 // changes so far
}

// New opens the room's first session.
func New(ctx context.Context, cfg Config) (*Room, error) {
	if cfg.Open == nil {
		return nil, errors.New("room: no way to open its session (Config.Open is nil)")
	}
	if cfg.MaxSeats <= 0 {
		cfg.MaxSeats = DefaultMaxSeats
	}
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = DefaultMaxWorkers
	}
	sess, err := cfg.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &Room{cfg: cfg, sess: sess, round: 1, led: newLedger()}, nil
}

// Close stops the room: no action is taken after it, and the session and its database are
// closed (Config.Close).
func (r *Room) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.cfg.Close != nil {
		return r.cfg.Close()
	}
	return nil
}

// changed counts a change and tells the screens.
func (r *Room) changed() {
	r.seq.Add(1)
	if r.cfg.OnChange != nil {
		r.cfg.OnChange()
	}
}

// Seq is the number of changes so far: a frame with the same Seq shows the same room.
func (r *Room) Seq() uint64 { return r.seq.Load() }

// Scenario is the scenario the room plays.
func (r *Room) Scenario() *engine.Scenario {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.sess.Scenario
}

// Toggle flips a toggle for everyone: every worker sees it from its next action on.
func (r *Room) Toggle(ctx context.Context, name string) (engine.Event, error) {
	return r.command(ctx, engine.CmdToggle{Name: name})
}

// Clock moves the room's clock forward by d.
func (r *Room) Clock(ctx context.Context, d time.Duration) (engine.Event, error) {
	return r.command(ctx, engine.CmdClock{Delta: d})
}

// PastLease moves the room's clock 1 ms past the earliest live lease.
func (r *Room) PastLease(ctx context.Context) (engine.Event, error) {
	return r.command(ctx, engine.CmdPastLease{})
}

// command does one of the session's commands alone.
func (r *Room) command(ctx context.Context, c engine.Command) (engine.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return engine.Event{}, ErrClosed
	}
	res, err := r.sess.Do(ctx, c)
	if err == nil {
		r.changed()
	}
	return res.Event, err
}

// SetPaused pauses the room (no attendee's key acts) or lets it go on.
func (r *Room) SetPaused(p bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.paused != p {
		r.paused = p
		if !p {
			r.ended = false
		}
		r.changed()
	}
}

// End ends the round: the room is paused and every screen shows the scoreboard. SetPaused(false)
// goes on from where it was.
func (r *Room) End() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paused, r.ended = true, true
	r.changed()
}

// Paused reports whether the room is paused.
func (r *Room) Paused() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.paused
}

// Crash crashes the named attendee's worker: it loses its memory and its connection, and its
// rows stay as they are. The attendee's next action restarts it.
func (r *Room) Crash(name string) (engine.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seatLocked(name)
	if s == nil {
		return engine.Event{}, fmt.Errorf("crash: no attendee %q: %w", name, engine.ErrNotNow)
	}
	if s.cur < 0 {
		return engine.Event{}, fmt.Errorf("crash: %s has no worker now: %w", name, engine.ErrNotNow)
	}
	res, err := r.sess.Do(context.Background(), engine.CmdCrash{Worker: s.cur})
	if err != nil {
		return engine.Event{}, err
	}
	r.lmu.Lock()
	r.led.crashed(s.name, res.Event)
	r.lmu.Unlock()
	r.changed()
	return res.Event, nil
}

// Reset opens a fresh outbox (Config.Open): every present attendee gets a fresh worker in it,
// the room's ledgers start again, and the question stays open.
func (r *Room) Reset(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	sess, err := r.cfg.Open(ctx)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	r.sess, r.round = sess, r.round+1
	r.lmu.Lock()
	r.led = newLedger()
	r.lmu.Unlock()
	var errs []error
	for _, s := range r.seats {
		s.cur, s.stale, s.incarnation = -1, -1, 0
		if s.present {
			errs = append(errs, s.startLocked(ctx))
		}
	}
	r.changed()
	return errors.Join(errs...)
}

// seatLocked finds a seat by name; r.mu must be held.
func (r *Room) seatLocked(name string) *Seat {
	i := slices.IndexFunc(r.seats, func(s *Seat) bool { return s.name == name })
	if i < 0 {
		return nil
	}
	return r.seats[i]
}

// ForRoom is sc as a room plays it: its outbox, settings, provider and expectations, without
// its declared workers (the attendees are the workers) or its script (the room plays it).
func ForRoom(sc *engine.Scenario) *engine.Scenario {
	c := *sc
	c.Workers, c.Steps, c.Rescuer = nil, nil, nil
	return &c
}
