package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"leaselab/engine/internal/keyed"
)

// Crew is a session's workers and the clock they share, acted on directly: a crash, a restart,
// a pause, one worker's action, a clock move, a setting switched. Each act is recorded in the
// ledger as it happens; none of them keeps the script's books (whether the run left its script
// is the session's Command's business, Session.Do). The scripted runner (Script), the explorer,
// the stress runner and the room act through it.
type Crew struct {
	db       DB
	clock    *Clock
	ledger   *Ledger
	env      *env
	gateway  *Gateway
	settings *liveSettings
	workers  []*Worker
	actions  int // actions done by the session, all kinds
}

// liveSettings are a session's settings now and as the run started, guarded for the workers
// that read them from their goroutines.
type liveSettings struct {
	mu      sync.Mutex
	now     Settings
	initial Settings
}

// get returns the current settings.
func (l *liveSettings) get() Settings { now, _ := l.both(); return now }

// both returns the current settings and the initial ones.
func (l *liveSettings) both() (now, initial Settings) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.now, l.initial
}

// toggle switches toggle name; before any worker has acted (started false) it is the run's own
// setting, as the same flag would be: the scenario's expectations for it apply.
func (l *liveSettings) toggle(name string, on, started bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	next := l.now
	if err := next.Set(name, on); err != nil {
		return err
	}
	if name == ToggleHeartbeat && on {
		next.fitHeartbeat()
		if err := next.CheckHeartbeat(); err != nil {
			return fmt.Errorf("heartbeat on: %v: %w", err, ErrNotNow)
		}
	}
	l.now = next
	if !started {
		l.initial = next
	}
	return nil
}

// duration sets lease, heartbeat-every or provider-latency.
func (l *liveSettings) duration(name string, d time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	next := l.now
	switch name {
	case "lease":
		if err := CheckLease(d); err != nil {
			return fmt.Errorf("set lease: %v: %w", err, ErrNotNow)
		}
		next.Lease = d
		if !next.Heartbeat && next.HeartbeatEvery >= d {
			next.HeartbeatEvery = DefaultHeartbeat(d) // ready for a heartbeat switched on later
		}
	case "heartbeat-every":
		if d < time.Millisecond {
			return fmt.Errorf("set heartbeat-every %s: want at least 1ms: %w", d, ErrNotNow)
		}
		next.HeartbeatEvery = d
	case "provider-latency":
		next.ProviderLatency = d
	default:
		return fmt.Errorf("unknown duration setting %q", name)
	}
	if err := next.CheckHeartbeat(); err != nil {
		return fmt.Errorf("set %s %s: %v: %w", name, d, err, ErrNotNow)
	}
	l.now = next
	return nil
}

// Workers are the crew's workers, in declared order (then those that joined).
func (c *Crew) Workers() []*Worker { return c.workers }

// Actions is how many actions the session has taken.
func (c *Crew) Actions() int { return c.actions }

// started reports whether any worker has taken an action yet.
func (c *Crew) started() bool { return c.ledger.workerActions() > 0 }

// SetToggle switches a toggle; workers see it from their next action on.
func (c *Crew) SetToggle(name string, on bool) (Event, error) {
	if err := c.settings.toggle(name, on, c.started()); err != nil {
		return Event{}, err
	}
	c.env.world.Add(1)
	return c.event(Event{Kind: EvSetting, Outcome: OnOff(on), Key: name,
		Text: fmt.Sprintf("%s switched %s (from the next action on)", name, OnOff(on))}), nil
}

// SetDuration sets lease, heartbeat-every or provider-latency.
func (c *Crew) SetDuration(name string, d time.Duration) (Event, error) {
	if err := c.settings.duration(name, d); err != nil {
		return Event{}, err
	}
	return c.event(Event{Kind: EvSetting, Key: name, Outcome: d.String(), Text: fmt.Sprintf("%s set to %s", name, d)}), nil
}

func (c *Crew) event(e Event) Event {
	e.At = c.clock.Now()
	return c.ledger.record(e)
}

// Worker finds a worker by short name ("A") or display name ("Worker-A").
func (c *Crew) Worker(name string) (*Worker, error) {
	for _, w := range c.workers {
		if w.Short == name || w.Name == name {
			return w, nil
		}
	}
	return nil, fmt.Errorf("unknown worker %q", name)
}

// Step performs worker i's next action.
func (c *Crew) Step(ctx context.Context, i int) (Event, bool, error) {
	w, err := c.worker(i)
	if err != nil {
		return Event{}, false, err
	}
	c.actions++
	return w.Step(ctx)
}

// ErrNoWorker is returned for a worker index the session does not have.
var ErrNoWorker = errors.New("no such worker")

// ErrNoLiveLease is returned by ClockPastLease when no lease is live; it wraps ErrNotNow.
var ErrNoLiveLease = fmt.Errorf("no live lease: %w", ErrNotNow)

func (c *Crew) worker(i int) (*Worker, error) {
	if i < 0 || i >= len(c.workers) {
		return nil, fmt.Errorf("worker %d: %w (the session has %d)", i+1, ErrNoWorker, len(c.workers))
	}
	return c.workers[i], nil
}

// Crash crashes worker i: its memory is lost and its connection closed; its rows stay.
func (c *Crew) Crash(i int) (Event, error) {
	w, err := c.worker(i)
	if err != nil {
		return Event{}, err
	}
	ev, err := w.crash()
	if ev.Kind == "" {
		return ev, err
	}
	ev.Worker = w.Name
	return c.event(ev), err
}

// Restart gives crashed worker i a new connection and empty memory.
func (c *Crew) Restart(ctx context.Context, i int) (Event, error) {
	return c.byWorker(i, func(w *Worker) (Event, error) { return w.restart(ctx) })
}

// SetPaused pauses or wakes worker i.
func (c *Crew) SetPaused(i int, paused bool) (Event, error) {
	return c.byWorker(i, func(w *Worker) (Event, error) { return w.setPaused(paused) })
}

// Freeze pauses worker i with why as its event's words (a room's member who left).
func (c *Crew) Freeze(i int, why string) (Event, error) {
	return c.byWorker(i, func(w *Worker) (Event, error) {
		ev, err := w.setPaused(true)
		ev.Text = why
		return ev, err
	})
}

// byWorker does do to worker i and records the event it returns, as that worker's.
func (c *Crew) byWorker(i int, do func(w *Worker) (Event, error)) (Event, error) {
	w, err := c.worker(i)
	if err != nil {
		return Event{}, err
	}
	ev, err := do(w)
	if err != nil {
		return ev, err
	}
	ev.Worker = w.Name
	return c.event(ev), nil
}

// AdvanceClock moves the scenario clock forward by d.
func (c *Crew) AdvanceClock(d time.Duration) Event {
	if c.clock.Follows() {
		return c.Note("the clock follows the wall clock here and cannot be moved")
	}
	from := c.clock.Now()
	to := c.clock.Advance(d)
	c.env.world.Add(1)
	return c.event(Event{Kind: EvClock, Text: fmt.Sprintf("clock moved %s → %s (+%s)", FormatClock(from), FormatClock(to), d)})
}

// SetClock moves the scenario clock to t (never backwards).
func (c *Crew) SetClock(t time.Time) (Event, error) {
	now := c.clock.Now()
	if t.Before(now) {
		return Event{}, fmt.Errorf("clock: %s is before %s; the clock never goes back", FormatClock(t), FormatClock(now))
	}
	return c.AdvanceClock(t.Sub(now)), nil
}

// ClockPastLease moves the clock 1 ms past the earliest live lease, as the database holds it.
func (c *Crew) ClockPastLease(ctx context.Context) (Event, error) {
	now := c.clock.Now()
	var earliest time.Time
	err := c.db.EachRow(ctx, func(r Row) error {
		if r.Status == StatusProcessing && !r.LockedUntil.Before(now) && (earliest.IsZero() || r.LockedUntil.Before(earliest)) {
			earliest = r.LockedUntil
		}
		return nil
	})
	if err != nil {
		return Event{}, err
	}
	if earliest.IsZero() {
		return Event{}, fmt.Errorf("clock past-lease at %s: %w", FormatClock(now), ErrNoLiveLease)
	}
	return c.AdvanceClock(earliest.Add(time.Millisecond).Sub(now)), nil
}

// phase writes a heading into the timeline.
func (c *Crew) phase(title string) Event { return c.event(Event{Kind: EvPhase, Text: title}) }

// Note writes a sentence into the timeline.
func (c *Crew) Note(text string) Event { return c.event(Event{Kind: EvNote, Text: text}) }

// Join adds a worker that was not declared, named name with LockedBy id, on its own connection
// (a room's member joining). It returns the new worker's index.
func (c *Crew) Join(ctx context.Context, name, id string) (int, error) {
	if name == "" || id == "" {
		return -1, fmt.Errorf("join: a worker needs a name and an id (got %q, %q)", name, id)
	}
	for _, w := range c.workers {
		if w.Name == name {
			return -1, fmt.Errorf("join %s: the session has a worker of that name already", name)
		}
	}
	spec := WorkerSpec{Short: name, ID: id}
	w := &Worker{Name: name, ID: id, Short: name, env: c.env, db: c.db, spec: spec}
	if err := w.connect(ctx); err != nil {
		return -1, err
	}
	c.workers = append(c.workers, w)
	c.env.world.Add(1) // a new worker may find work the others gave up on
	return len(c.workers) - 1, nil
}

// runnable lists the workers among ws that can act now.
func runnable(ws []*Worker) []*Worker {
	var out []*Worker
	for _, w := range ws {
		if w.Runnable() {
			out = append(out, w)
		}
	}
	return out
}

// NextTimer is the earliest scenario time at which some worker will have something to do
// without anyone else acting (a provider answer, a heartbeat, the end of a blocking lease); zero
// when there is none.
func (c *Crew) NextTimer() time.Time { return nextTimer(c.workers) }

// nextTimer is the earliest worker timer among ws, zero when none.
func nextTimer(ws []*Worker) time.Time {
	var t time.Time
	for _, w := range ws {
		if wt := w.Timer(); !wt.IsZero() && (t.IsZero() || wt.Before(t)) {
			t = wt
		}
	}
	return t
}

// idle reports whether no worker among ws can act now and none is waiting on the clock: a
// session in this state will not change unless someone crashes, restarts, toggles or moves the
// clock.
func idle(ws []*Worker) bool {
	return len(runnable(ws)) == 0 && nextTimer(ws).IsZero()
}

// Runnable is the workers that can act now.
func (c *Crew) Runnable() []*Worker { return runnable(c.workers) }

// NeverFinalized counts the messages the session created that no finalize has written, except
// those except names (a run cut short leaves some unfinished; they are not lost).
func (c *Crew) NeverFinalized(except func(key string) bool) int {
	n := 0
	c.gateway.eachKey(func(k keyed.Ref) {
		if key := k.String(); c.ledger.commitsOf(key) == 0 && !except(key) {
			n++
		}
	})
	return n
}

// pick returns the named workers, or all of them.
func (c *Crew) pick(names []string) []*Worker {
	if len(names) == 0 {
		return c.workers
	}
	var out []*Worker
	for _, n := range names {
		if w, err := c.Worker(n); err == nil {
			out = append(out, w)
		}
	}
	return out
}

// index is w's index among the crew's workers, -1 when it is none of them.
func (c *Crew) index(w *Worker) int {
	for i, x := range c.workers {
		if x == w {
			return i
		}
	}
	return -1
}
