package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Session is one run of a scenario over one database: the clock, the provider, the gateway, the
// workers and their ledgers. The same worker code runs in all three ways a session offers:
// stepped one action at a time (Next, StepWorker), scheduled by a seeded scheduler (run steps),
// and free-running on goroutines (concurrent steps, runConcurrent).
type Session struct {
	Scenario *Scenario
	db       DB
	clock    *Clock
	provider *Provider
	gateway  *Gateway
	ledger   *Ledger
	env      *env
	workers  []*Worker
	initial  Settings

	mu       sync.Mutex // guards settings
	settings Settings

	// Script position; touched only by the goroutine that drives the session.
	pc      int       // next script step
	inStep  bool      // the step at pc has started (multi-action steps)
	stepN   int       // actions done by the step at pc
	rr      int       // round-robin cursor
	runFrom time.Time // scenario time when the current run step started
	// runMoved: since the current run step last found nobody ready, some action did more than
	// find nothing claimable (runOnce).
	runMoved bool
	rng      *rand.Rand
	pauses   map[*Worker]int // worker -> actions left before a random pause ends
	rescuer  *Rescuer        // the sweeper, nil when the scenario has none (rescuer.go)
	actions  int             // actions done by the session, all kinds
	free     freeOptions     // how concurrent steps run
	// The progress watchdog (watchdog.go), and the pauses the run's own steps drew.
	watch     progressWatch
	runPauses int
	// stalled says, in words, why the script ended without finishing (ErrNoProgress: the
	// watchdog); "" while it has not (watchdog.go, endStalled).
	stalled string
	// asked are the script steps with a question that have started, by index: where their
	// events begin and, once known, the answer the run gave (observe_session.go).
	asked map[int]*askedStep
	// offScript names what a person did that took the run off its script (offscript.go).
	offScript []string
	// freeRan: the workers have run free (StartFree): the script is over, and the session is
	// one with no script from then on (Done, Next).
	freeRan bool
}

// NewSession seeds db for sc (through the gateway, one transaction per payment) and connects one
// worker per declared worker, each on its own connection. The clock starts at Epoch.
func NewSession(ctx context.Context, sc *Scenario, db DB) (*Session, error) {
	return NewSessionWith(ctx, sc, db, SessionOptions{Seed: true, FreeLatency: defaultFreeLatency})
}

// SessionOptions change how a session starts.
type SessionOptions struct {
	// Seed creates the scenario's payments; off, the session works on the rows db already has
	// (a worker process joining a shared database).
	Seed bool
	// Clock replaces the scenario clock (a wall clock for separate processes).
	Clock *Clock
	// FreeLatency is how long, in real time, a provider call takes in a concurrent step, where
	// the workers run free and the scenario clock stands still (NewSession: defaultFreeLatency).
	FreeLatency time.Duration
	// Sleep waits for d or until ctx ends, in real time; nil: SystemWall's. Tests may inject
	// their own.
	Sleep func(ctx context.Context, d time.Duration)
}

// NewSessionWith is NewSession with options.
func NewSessionWith(ctx context.Context, sc *Scenario, db DB, opt SessionOptions) (*Session, error) {
	clock, sleep := opt.Clock, opt.Sleep
	if clock == nil {
		clock = newClock(Epoch)
	}
	if sleep == nil {
		sleep = SystemWall{}.Sleep
	}
	s := &Session{
		Scenario: sc,
		db:       db,
		clock:    clock,
		provider: newProvider(sc.Fail, sc.Messages),
		ledger:   newLedger(sc.Messages),
		settings: sc.Settings,
		initial:  sc.Settings,
		rng:      rand.New(rand.NewPCG(uint64(sc.Seed), 0x1ea5e1ab)),
		pauses:   map[*Worker]int{},
		free:     freeOptions{latency: opt.FreeLatency, sleep: sleep},
	}
	s.gateway = newGateway(db, sc.Messages)
	s.env = &env{clock: s.clock, provider: s.provider, ledger: s.ledger, settings: s.Settings, retry: newRetrySide(sc, clock.Now()), caps: db.Capabilities()}
	if opt.Seed {
		if err := Seed(ctx, s.gateway, sc.Messages, clock.Now()); err != nil {
			return nil, err
		}
	}
	for _, spec := range sc.Workers {
		w := &Worker{Name: WorkerName(spec.Short), ID: spec.ID, Short: spec.Short, env: s.env, db: db, spec: spec}
		if err := w.connect(ctx); err != nil {
			s.Close()
			return nil, err
		}
		s.workers = append(s.workers, w)
	}
	if err := s.startRescuer(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes every worker's connection.
func (s *Session) Close() error {
	var errs []error
	for _, w := range s.workers {
		errs = append(errs, w.close())
	}
	errs = append(errs, s.closeRescuer())
	return errors.Join(errs...)
}

// DB is the session's database.
func (s *Session) DB() DB { return s.db }

// Clock is the scenario clock.
func (s *Session) Clock() *Clock { return s.clock }

// Provider is the fake payment provider.
func (s *Session) Provider() *Provider { return s.provider }

// Ledger holds the ledgers and the event log.
func (s *Session) Ledger() *Ledger { return s.ledger }

// Workers are the session's workers, in declared order.
func (s *Session) Workers() []*Worker { return s.workers }

// Settings returns the current settings.
func (s *Session) Settings() Settings { now, _ := s.bothSettings(); return now }

// InitialSettings are the settings the session started with: after flags, and after toggles
// switched before any worker acted.
func (s *Session) InitialSettings() Settings { _, initial := s.bothSettings(); return initial }

// bothSettings are the current settings and the initial ones.
func (s *Session) bothSettings() (now, initial Settings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings, s.initial
}

// started reports whether any worker has taken an action yet.
func (s *Session) started() bool { return s.ledger.workerActions() > 0 }

// SetToggle switches a toggle; workers see it from their next action on.
func (s *Session) SetToggle(name string, on bool) (Event, error) {
	started := s.started()
	s.mu.Lock()
	next := s.settings
	err := next.Set(name, on)
	if err == nil && name == ToggleHeartbeat && on {
		next.fitHeartbeat()
		if err = next.CheckHeartbeat(); err != nil {
			err = fmt.Errorf("heartbeat on: %v: %w", err, ErrNotNow)
		}
	}
	if err == nil {
		s.settings = next
	}
	if err == nil && !started {
		// Before any worker has acted, a toggle is the run's own setting, as the same flag would
		// be: the scenario's expectations for it apply.
		s.initial = s.settings
	}
	s.mu.Unlock()
	if err != nil {
		return Event{}, err
	}
	s.env.world.Add(1)
	return s.event(Event{Kind: EvSetting, Outcome: OnOff(on), Key: name,
		Text: fmt.Sprintf("%s switched %s (from the next action on)", name, OnOff(on))}), nil
}

// SetDuration sets lease, heartbeat-every or provider-latency.
func (s *Session) SetDuration(name string, d time.Duration) (Event, error) {
	s.mu.Lock()
	next := s.settings
	switch name {
	case "lease":
		if err := CheckLease(d); err != nil {
			s.mu.Unlock()
			return Event{}, fmt.Errorf("set lease: %v: %w", err, ErrNotNow)
		}
		next.Lease = d
		if !next.Heartbeat && next.HeartbeatEvery >= d {
			next.HeartbeatEvery = DefaultHeartbeat(d) // ready for a heartbeat switched on later
		}
	case "heartbeat-every":
		if d < time.Millisecond {
			s.mu.Unlock()
			return Event{}, fmt.Errorf("set heartbeat-every %s: want at least 1ms: %w", d, ErrNotNow)
		}
		next.HeartbeatEvery = d
	case "provider-latency":
		next.ProviderLatency = d
	default:
		s.mu.Unlock()
		return Event{}, fmt.Errorf("unknown duration setting %q", name)
	}
	if err := next.CheckHeartbeat(); err != nil {
		s.mu.Unlock()
		return Event{}, fmt.Errorf("set %s %s: %v: %w", name, d, err, ErrNotNow)
	}
	s.settings = next
	s.mu.Unlock()
	return s.event(Event{Kind: EvSetting, Key: name, Outcome: d.String(), Text: fmt.Sprintf("%s set to %s", name, d)}), nil
}

func (s *Session) event(e Event) Event {
	e.At = s.clock.Now()
	return s.ledger.record(e)
}

// Worker finds a worker by short name ("A") or display name ("Worker-A").
func (s *Session) Worker(name string) (*Worker, error) {
	for _, w := range s.workers {
		if w.Short == name || w.Name == name {
			return w, nil
		}
	}
	return nil, fmt.Errorf("unknown worker %q", name)
}

// StepWorker performs worker i's next action.
func (s *Session) StepWorker(ctx context.Context, i int) (Event, bool, error) {
	w, err := s.worker(i)
	if err != nil {
		return Event{}, false, err
	}
	s.actions++
	return w.Step(ctx)
}

// ErrNoWorker is returned for a worker index the session does not have.
var ErrNoWorker = errors.New("no such worker")

// ErrNoLiveLease is returned by ClockPastLease when no lease is live; it wraps ErrNotNow.
var ErrNoLiveLease = fmt.Errorf("no live lease: %w", ErrNotNow)

func (s *Session) worker(i int) (*Worker, error) {
	if i < 0 || i >= len(s.workers) {
		return nil, fmt.Errorf("worker %d: %w (the session has %d)", i+1, ErrNoWorker, len(s.workers))
	}
	return s.workers[i], nil
}

// Crash crashes worker i: its memory is lost and its connection closed; its rows stay.
func (s *Session) Crash(i int) (Event, error) {
	w, err := s.worker(i)
	if err != nil {
		return Event{}, err
	}
	ev, err := w.crash()
	if ev.Kind == "" {
		return ev, err
	}
	ev.Worker = w.Name
	return s.event(ev), err
}

// Restart gives crashed worker i a new connection and empty memory.
func (s *Session) Restart(ctx context.Context, i int) (Event, error) {
	return s.byWorker(i, func(w *Worker) (Event, error) { return w.restart(ctx) })
}

// SetPaused pauses or wakes worker i.
func (s *Session) SetPaused(i int, paused bool) (Event, error) {
	return s.byWorker(i, func(w *Worker) (Event, error) { return w.setPaused(paused) })
}

// byWorker does do to worker i and records the event it returns, as that worker's.
func (s *Session) byWorker(i int, do func(w *Worker) (Event, error)) (Event, error) {
	w, err := s.worker(i)
	if err != nil {
		return Event{}, err
	}
	ev, err := do(w)
	if err != nil {
		return ev, err
	}
	ev.Worker = w.Name
	return s.event(ev), nil
}

// AdvanceClock moves the scenario clock forward by d.
func (s *Session) AdvanceClock(d time.Duration) Event {
	if s.clock.Follows() {
		return s.Note("the clock follows the wall clock here and cannot be moved")
	}
	from := s.clock.Now()
	to := s.clock.Advance(d)
	s.env.world.Add(1)
	return s.event(Event{Kind: EvClock, Text: fmt.Sprintf("clock moved %s → %s (+%s)", FormatClock(from), FormatClock(to), d)})
}

// SetClock moves the scenario clock to t (never backwards).
func (s *Session) SetClock(t time.Time) (Event, error) {
	now := s.clock.Now()
	if t.Before(now) {
		return Event{}, fmt.Errorf("clock: %s is before %s; the clock never goes back", FormatClock(t), FormatClock(now))
	}
	return s.AdvanceClock(t.Sub(now)), nil
}

// ClockPastLease moves the clock 1 ms past the earliest live lease, as the database holds it.
func (s *Session) ClockPastLease(ctx context.Context) (Event, error) {
	now := s.clock.Now()
	var earliest time.Time
	err := s.db.EachRow(ctx, func(r Row) error {
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
	return s.AdvanceClock(earliest.Add(time.Millisecond).Sub(now)), nil
}

// phase writes a heading into the timeline.
func (s *Session) phase(title string) Event { return s.event(Event{Kind: EvPhase, Text: title}) }

// Note writes a sentence into the timeline.
func (s *Session) Note(text string) Event { return s.event(Event{Kind: EvNote, Text: text}) }

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
func (s *Session) NextTimer() time.Time { return nextTimer(s.workers) }

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

// idle reports whether no worker can act now and none is waiting on the clock: a session in this
// state will not change unless someone crashes, restarts, toggles or moves the clock.
func (s *Session) idle() bool {
	return len(runnable(s.workers)) == 0 && nextTimer(s.workers).IsZero()
}

// ScriptDone reports whether every step of the script has run.
func (s *Session) ScriptDone() bool { return s.pc >= len(s.Scenario.Steps) }

// Done reports whether the scenario has finished: its script has run (where RunToEnd stops), or,
// with no script (or once the workers have run free), nothing is left to happen.
func (s *Session) Done() bool {
	switch {
	case s.freeRan:
		return s.ScriptDone() || s.idle()
	case len(s.Scenario.Steps) > 0:
		return s.ScriptDone()
	}
	return s.idle()
}

// ScriptPosition returns the line of the next script step (0 when the script is done) and the
// number of steps.
func (s *Session) ScriptPosition() (line, index, total int) {
	if s.pc < len(s.Scenario.Steps) {
		line = s.Scenario.Steps[s.pc].Line
	}
	return line, s.pc, len(s.Scenario.Steps)
}

// Actions is how many actions the session has taken.
func (s *Session) Actions() int { return s.actions }

// Runnable is the workers that can act now.
func (s *Session) Runnable() []*Worker { return runnable(s.workers) }

// NeverFinalized counts the messages the session created that no finalize has written, except
// those except names (a run cut short leaves some unfinished; they are not lost).
func (s *Session) NeverFinalized(except func(key string) bool) int {
	n := 0
	s.gateway.eachKey(func(k keyRef) {
		if key := k.String(); s.ledger.commitsOf(key) == 0 && !except(key) {
			n++
		}
	})
	return n
}
