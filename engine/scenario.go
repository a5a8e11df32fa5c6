package engine

import (
	"fmt"
	"strings"
	"time"
)

// Scenario is a lesson: the database to seed, the workers, the settings, a script of steps, and
// what the lesson expects to happen. Scenarios are data: see Parse for the file format.
type Scenario struct {
	Name     string
	Title    string
	Source   string   // file name it was read from
	Explain  []string // lines of explanation, shown in the lab and the README
	Messages int
	Workers  []WorkerSpec
	Settings Settings
	Fail     []string // keys the provider fails; empty: the default rule
	// Faults, Outages and FailRate make the provider fail instead of answering (faults.go).
	Faults   []Fault
	Outages  []Outage
	FailRate float64 // chance that a call fails (transient), drawn from the seed
	Seed     int64
	Teaches  string // the toggle this lesson is about, if any
	// Incident is the real queue bug the lesson replays (incident.go); nil for the others.
	Incident *Incident
	// Backend is the kind of database the lesson needs ("" for any; BackendPostgres for a
	// lesson about row locks, which SQLite does not have).
	Backend string
	// Requires are the capabilities the lesson needs of its database (Capabilities, by the
	// names of CapabilityNames): a backend that lacks one is refused before anything is
	// opened. `backend: postgres` requires row-locks.
	Requires []string
	// VerdictChecks are the check IDs that decide the verdict; empty: every check but
	// processed-once (at-least-once re-processing is shown, not failed).
	VerdictChecks []string
	Pass          string // verdict when every check holds
	Failure       string // verdict otherwise
	Steps         []Step
	Expect        []ExpectBlock
	// Rescuer is the sweeper that moves expired leases back to Pending (rescuer.go); nil: none.
	Rescuer *RescuerSpec
	// Declared holds a toggle's value as the file declared it, for each toggle Apply changed
	// (a flag): what the scenario's expectations were written for.
	Declared map[string]bool
}

// BackendPostgres is Scenario.Backend for a lesson only PostgreSQL can run.
const BackendPostgres = "postgres"

// WorkerSpec declares one worker.
type WorkerSpec struct {
	Short string // as the script names it: "A"
	ID    string // what it writes to LockedBy: "Worker-A"
	// Latency, when Slow is set, is how long this worker's provider calls take, in scenario
	// time, instead of the provider's latency: a worker with a slow network or a long GC.
	Latency time.Duration
	Slow    bool
	// Skew is how far this worker's clock is off the scenario's (skew.go): +400ms runs fast.
	Skew time.Duration
}

// StepKind says what a script step does.
type StepKind int

// Step kinds.
const (
	StepWorker     StepKind = iota // a worker acts: Action (ActNone: its own next action), Count times
	StepWorkerRun                  // a worker acts until it has nothing to do
	StepCrash                      // crash a worker
	StepRestart                    // restart a crashed worker
	StepPause                      // pause a worker (it keeps believing it owns what it holds)
	StepResume                     // wake a paused worker
	StepClock                      // move the clock: by Delta, to At, or just past the earliest live lease
	StepSet                        // set a toggle or a duration
	StepRun                        // all (or the named) workers act until none can
	StepConcurrent                 // the named workers run free, each on its own goroutine
	StepPhase                      // a heading in the timeline
	StepNote                       // a sentence in the timeline
)

// Step is one line of a scenario's script.
type Step struct {
	Line    int
	Kind    StepKind
	Worker  string   // short name, for worker steps
	Workers []string // for run and concurrent; empty: every worker
	Action  Action
	Key     string
	Count   int
	// Clock steps.
	Delta     time.Duration
	At        time.Time
	PastLease bool
	// Set steps.
	Name  string
	On    bool
	Value time.Duration
	// Run steps.
	Random    bool
	UntilDone bool    // advance the clock to the next timer whenever no worker can act
	CrashRate float64 // chance, per action, that the acting worker crashes after it
	CrashAt   Action  // with CrashRate: crash only after this action (ActNone: after any)
	PauseRate float64 // chance, per action, that it pauses (woken a few actions later)
	Text      string
	Ask       *Question // a prediction the lab asks before the step (parse_ask.go)
}

// ExpectBlock is a list of expectations that apply when every condition holds.
type ExpectBlock struct {
	Line  int
	When  map[string]bool // toggle -> value; empty: always
	Items []Expectation
}

// Expectation is one "metric op value" line.
type Expectation struct {
	Line   int
	Metric string // a summary key: processing_attempts, payments.paid, status_checks[PAY-001], verdict
	Op     string // = != < <= > >=
	Value  int64
	Word   string // for verdict: pass or fail
}

func (e Expectation) String() string {
	v := fmt.Sprint(e.Value)
	if e.Word != "" {
		v = e.Word
	}
	return fmt.Sprintf("%s %s %s", e.Metric, e.Op, v)
}

// Applies reports whether the block's conditions hold for settings s.
func (b ExpectBlock) Applies(s Settings) bool {
	for name, want := range b.When {
		got, err := s.Get(name)
		if err != nil || got != want {
			return false
		}
	}
	return true
}

// WhenString renders the block's conditions: "fencing=off".
func (b ExpectBlock) WhenString() string { return whenString(b.When) }

// decides reports whether check id counts towards the verdict. By default every check does but
// processed-once: a message processed again after its owner lost the lease is at-least-once
// delivery, not a safety failure; a lesson about it (lease-too-short) names the check.
func (sc *Scenario) decides(id string) bool {
	if len(sc.VerdictChecks) == 0 {
		return id != CheckProcessedOnce && id != CheckNoLockWaits // a wait is slow, not unsafe
	}
	for _, c := range sc.VerdictChecks {
		if c == id {
			return true
		}
	}
	return false
}

// WorkerShort returns the short names of the declared workers.
func (sc *Scenario) WorkerShort() []string {
	out := make([]string, len(sc.Workers))
	for i, w := range sc.Workers {
		out[i] = w.Short
	}
	return out
}

// SetWorkers replaces the declared workers with n workers named A, B, C, … (up to 26, then W27…).
func (sc *Scenario) SetWorkers(n int) {
	sc.Workers = nil
	for i := 0; i < n; i++ {
		short := string(rune('A' + i))
		if i >= 26 {
			short = fmt.Sprintf("W%d", i+1)
		}
		sc.Workers = append(sc.Workers, WorkerSpec{Short: short, ID: WorkerName(short)})
	}
}

// resizeWorkers keeps the first n declared workers (with their ids and latencies) and adds
// A, B, C, … names not yet taken when n is larger.
func (sc *Scenario) resizeWorkers(n int) {
	if n <= len(sc.Workers) {
		sc.Workers = sc.Workers[:n]
		return
	}
	taken := map[string]bool{}
	for _, w := range sc.Workers {
		taken[w.Short] = true
	}
	for i := 0; len(sc.Workers) < n; i++ {
		short := string(rune('A' + i))
		if i >= 26 {
			short = fmt.Sprintf("W%d", i+1)
		}
		if !taken[short] {
			sc.Workers = append(sc.Workers, WorkerSpec{Short: short, ID: WorkerName(short)})
		}
	}
}

// Default verdicts.
const (
	DefaultPass    = "ONE OWNER PER MESSAGE: EVERY CHECK HOLDS ✅"
	DefaultFailure = "THE SAFETY CHECKS FAILED ❌"
)

// Overrides are the command line's changes to a scenario.
type Overrides struct {
	Workers  int           // 0: as declared
	Messages int           // 0: as declared
	Lease    time.Duration // 0: as declared
	Toggles  map[string]bool
	Seed     *int64
	FailRate *float64 // --fail-rate: nil as declared
	// MaxAttempts is --max-attempts: 0 as declared; it turns dead letters on.
	MaxAttempts int
	Skew        map[string]time.Duration // worker short name -> clock offset (--skew B=+400ms)
}

// declare keeps the file's value of a toggle a flag is about to change (Declared).
func (sc *Scenario) declare(name string) {
	v, err := sc.Settings.Get(name)
	if err != nil {
		return
	}
	if sc.Declared == nil {
		sc.Declared = map[string]bool{}
	}
	if _, ok := sc.Declared[name]; !ok {
		sc.Declared[name] = v
	}
}

// Own is a toggle's value as the scenario file declares it, before any flag.
func (sc *Scenario) Own(name string) (bool, error) {
	if v, ok := sc.Declared[name]; ok {
		return v, nil
	}
	return sc.Settings.Get(name)
}

// Apply changes the scenario as the overrides say, and checks that its script still names only
// workers it has.
func (sc *Scenario) Apply(o Overrides) error {
	if o.Workers != 0 {
		if o.Workers < 1 || o.Workers > MaxWorkers {
			return fmt.Errorf("--workers %d: want 1 to %d", o.Workers, MaxWorkers)
		}
		sc.resizeWorkers(o.Workers)
	}
	if o.Messages != 0 {
		if o.Messages < 1 || o.Messages > MaxMessages {
			return fmt.Errorf("--messages %d: want 1 to %d", o.Messages, MaxMessages)
		}
		sc.Messages = o.Messages
	}
	if o.FailRate != nil {
		if r := *o.FailRate; !(r >= 0 && r <= 1) { // also refuses NaN
			return fmt.Errorf("--fail-rate %g: want a chance from 0 to 1", r)
		}
		sc.FailRate = *o.FailRate
	}
	if o.MaxAttempts != 0 {
		if o.MaxAttempts < 1 || o.MaxAttempts > 1000 {
			return fmt.Errorf("--max-attempts %d: want 1 to 1000", o.MaxAttempts)
		}
		sc.declare(ToggleDeadLetter)
		sc.Settings.MaxAttempts, sc.Settings.DeadLetter = o.MaxAttempts, true
	}
	if o.Workers != 0 || o.Messages != 0 {
		sc.retitle() // "two workers, six payments" stays true
	}
	if o.Lease != 0 {
		if err := CheckLease(o.Lease); err != nil {
			return fmt.Errorf("--lease %s: %w", o.Lease, err)
		}
		sc.Settings.Lease = o.Lease
		if sc.Settings.HeartbeatEvery >= o.Lease {
			sc.Settings.HeartbeatEvery = DefaultHeartbeat(o.Lease)
		}
	}
	for name, on := range o.Toggles {
		sc.declare(name)
		if err := sc.Settings.Set(name, on); err != nil {
			return err
		}
	}
	if err := sc.Settings.CheckHeartbeat(); err != nil {
		return fmt.Errorf("--lease %s --heartbeat: %w", sc.Settings.Lease, err)
	}
	if o.Seed != nil {
		sc.Seed = *o.Seed
	}
	if err := sc.applySkew(o.Skew); err != nil {
		return err
	}
	known := map[string]bool{}
	for _, w := range sc.Workers {
		known[w.Short] = true
	}
	for _, st := range sc.Steps {
		names := append([]string{st.Worker}, st.Workers...)
		for _, n := range names {
			if n != "" && !known[n] {
				return fmt.Errorf("%s:%d: the script names worker %s, but the run has only %s",
					sc.Source, st.Line, n, strings.Join(sc.WorkerShort(), " "))
			}
		}
	}
	return nil
}
