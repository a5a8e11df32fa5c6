package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Session is one run of a scenario over one database: it opens (NewSession), does a Command
// (Do), snapshots (Snapshot) and closes, and hands out its parts: the crew (the workers and the
// clock, acted on directly), the scripted runner (Script), the rescuer, and a probe for the
// explorer. The same worker code runs in all three ways a session offers: stepped one action at a
// time (Script.Next, CmdStepWorker), scheduled by a seeded scheduler (run steps), and
// free-running on goroutines (concurrent steps, StartFree).
type Session struct {
	Scenario *Scenario
	db       DB
	clock    *Clock
	provider *Provider
	gateway  *Gateway
	ledger   *Ledger
	env      *env
	crew     *Crew
	script   *Script
	rescuer  *Rescuer // the sweeper, nil when the scenario has none (rescuer.go)
	// off names what a person did that took the run off its script (offscript.go).
	off offScript
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
	ledger := newLedger(sc.Messages)
	settings := &liveSettings{now: sc.Settings, initial: sc.Settings}
	s := &Session{
		Scenario: sc,
		db:       db,
		clock:    clock,
		provider: newProvider(sc.Fail, sc.Messages),
		ledger:   ledger,
	}
	s.gateway = newGateway(db, sc.Messages)
	s.env = &env{clock: s.clock, provider: s.provider, ledger: s.ledger, settings: settings.get, retry: newRetrySide(sc, clock.Now()), caps: db.Capabilities()}
	s.crew = &Crew{db: db, clock: clock, ledger: ledger, env: s.env, gateway: s.gateway, settings: settings}
	s.script = &Script{sc: sc, crew: s.crew, free: freeOptions{latency: opt.FreeLatency, sleep: sleep},
		rng: rand.New(rand.NewPCG(uint64(sc.Seed), 0x1ea5e1ab)), pauses: map[*Worker]int{},
		watch: &watchdog{crew: s.crew, sc: sc},
		asked: &observer{ledger: ledger, db: db, settings: settings, summarize: s.Summarize}}
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
		s.crew.workers = append(s.crew.workers, w)
	}
	r, err := newRescuer(ctx, sc.Rescuer, db, s.crew)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.rescuer, s.script.rescuer = r, r
	return s, nil
}

// Close closes every worker's connection, and the rescuer's.
func (s *Session) Close() error {
	var errs []error
	for _, w := range s.crew.workers {
		errs = append(errs, w.close())
	}
	errs = append(errs, s.rescuer.close())
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
func (s *Session) Workers() []*Worker { return s.crew.workers }

// Worker finds a worker by short name ("A") or display name ("Worker-A").
func (s *Session) Worker(name string) (*Worker, error) { return s.crew.Worker(name) }

// Settings returns the current settings.
func (s *Session) Settings() Settings { return s.crew.settings.get() }

// InitialSettings are the settings the session started with: after flags, and after toggles
// switched before any worker acted.
func (s *Session) InitialSettings() Settings { _, initial := s.crew.settings.both(); return initial }

// Crew is the session's workers and clock, acted on directly (no script bookkeeping: a
// person's move goes through Do, whose commands record that it left the script).
func (s *Session) Crew() *Crew { return s.crew }

// Script is the session's scripted runner: Next, RunToEnd, where the script stands and what
// its questions observed.
func (s *Session) Script() *Script { return s.script }

// Rescuer is the session's rescuer, nil when the scenario has none.
func (s *Session) Rescuer() *Rescuer { return s.rescuer }

// Probe is what engine/explore reads of the session now.
func (s *Session) Probe() Probe {
	return Probe{crew: s.crew, rescuer: s.rescuer, provider: s.provider, sc: s.Scenario}
}

// Done reports whether the scenario has finished: its script has run (where RunToEnd stops), or,
// with no script (or once the workers have run free), nothing is left to happen.
func (s *Session) Done() bool {
	r := s.script
	switch {
	case r.freeRan:
		return r.Done() || idle(s.crew.workers)
	case len(r.sc.Steps) > 0:
		return r.Done()
	}
	return idle(s.crew.workers)
}
