package engine

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The rescuer (issue 20, item 4) is a sweeper with its own connection, as River's JobRescuer,
// pg-boss's maintenance and Oban's Lifeline are: on its own schedule it reads the leases that
// have ended (Expired) and moves each back to Pending (Rescue), in two statements. Between its
// read and its write the lease's worker may finalize late; guarded (guarded-rescue on) the
// UPDATE checks again what the rescuer saw and changes 0 rows; unguarded it names the row by Id
// alone and sets a Processed row back to Pending, to be processed again (River #1302).

// RescuerSpec declares a scenario's rescuer (`rescuer: R every 200ms`).
type RescuerSpec struct {
	Short string        // as the script names it: "R"
	Every time.Duration // its schedule during run steps
	// Fails: the sweeper is a pruner that fails the messages it finds (prune.go), as Solid
	// Queue's supervisor fails a pruned process's claimed executions.
	Fails bool
}

// Step kinds of the rescuer, stepped as a worker is (`R scan`, `R rescue`).
const (
	StepScan   StepKind = 100 + iota // the rescuer's read of the expired leases
	StepRescue                       // its UPDATE of each lease it read (reading first if it holds none)
)

// EvRescue is an event of the rescuer: a sweep's read or a rescue's UPDATE.
const EvRescue EventKind = "rescue"

// RescuerName turns a rescuer's short name into its display name: "R" → "Rescuer-R".
func RescuerName(short string) string { return "Rescuer-" + short }

// Rescuer is a session's sweeper. It is driven by the session's goroutine only.
type Rescuer struct {
	Name, Short string
	every       time.Duration
	conn        Conn
	rc          RescueConn
	seen        []Expired
	seenCommits map[string]int // each seen key's committed finalizes when it was read
	next        time.Time      // its next sweep during run steps
	counts      RescuerSummary
	// What it acts on and reads: the clock, the ledger it records into and reads the
	// finalizes from, the settings (guarded-rescue), and the session's shared state (SQL
	// traces, the world version).
	clock    *Clock
	ledger   *Ledger
	env      *env
	settings *liveSettings
	fails    bool // it fails its rescues (the prune lesson: RescuerSpec.Fails)
}

// RescuerSummary is what the rescuer did, counted from the run: in the report and in --json.
type RescuerSummary struct {
	Name  string `json:"name"`
	Every string `json:"every"`
	// Sweeps are its reads; Seen the expired leases they returned.
	Sweeps int `json:"sweeps"`
	Seen   int `json:"seen"`
	// Rescued are UPDATEs that changed a row (1 row affected); Refused guarded ones that changed
	// none (the row had moved on since the read).
	Rescued int `json:"rescues"`
	Refused int `json:"rescues_refused"`
	// RescuedFinished are rescues that set back to Pending a message whose finalize committed
	// between the rescuer's read and its write: the race of River #1302.
	RescuedFinished int `json:"rescued_finished"`
}

// newRescuer connects the scenario's rescuer spec on db; nil when there is none.
func newRescuer(ctx context.Context, spec *RescuerSpec, db DB, crew *Crew) (*Rescuer, error) {
	if spec == nil {
		return nil, nil
	}
	c, err := db.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: connect: %w", RescuerName(spec.Short), err)
	}
	if !crew.env.caps.Rescue {
		c.Close()
		return nil, fmt.Errorf("%s: this database cannot rescue leases (its connection has no Expired and Rescue)", RescuerName(spec.Short))
	}
	return &Rescuer{Name: RescuerName(spec.Short), Short: spec.Short, every: spec.Every, conn: c, rc: c.(RescueConn),
		next: crew.clock.Now().Add(spec.Every), counts: RescuerSummary{Name: RescuerName(spec.Short), Every: spec.Every.String()},
		clock: crew.clock, ledger: crew.ledger, env: crew.env, settings: crew.settings, fails: spec.Fails}, nil
}

// close closes the rescuer's connection; nothing without a rescuer.
func (r *Rescuer) close() error {
	if r == nil || r.conn == nil {
		return nil
	}
	err := r.conn.Close()
	r.conn = nil
	return err
}

// step carries out a script's `R scan` or `R rescue`.
func (r *Rescuer) step(ctx context.Context, st *Step) (acted, done bool, err error) {
	if r == nil || r.Short != st.Name {
		return false, true, fmt.Errorf("no rescuer %q in this run: %w", st.Name, ErrNotNow)
	}
	if st.Kind == StepScan {
		return true, true, r.scan(ctx, false)
	}
	return true, true, r.rescue(ctx, false)
}

// scan is the rescuer's read: the leases that have ended now.
// quiet: a scheduled sweep that finds nothing is counted, not written in the timeline.
func (r *Rescuer) scan(ctx context.Context, quiet bool) error {
	now := r.clock.Now()
	tr := startTrace(r.env, r.conn)
	seen, err := r.rc.Expired(ctx, now)
	tr = stopTrace(r.conn, tr)
	if err != nil {
		return fmt.Errorf("%s: %w", r.Name, err)
	}
	r.seen, r.seenCommits = seen, map[string]int{}
	r.counts.Sweeps++
	r.counts.Seen += len(seen)
	var parts []string
	for i, e := range seen {
		r.seenCommits[e.IdempotencyKey] = r.ledger.commitsOf(e.IdempotencyKey)
		if i < MaxExamples {
			parts = append(parts, fmt.Sprintf("%s (%s, lease v%d, ended %s)", e.IdempotencyKey, e.LockedBy, e.LeaseVersion, FormatClock(e.LockedUntil)))
		}
	}
	if quiet && len(seen) == 0 {
		return nil
	}
	text := fmt.Sprintf("%s swept: no expired lease", r.Name)
	if len(seen) > 0 {
		text = fmt.Sprintf("%s swept: %d expired %s: %s", r.Name, len(seen), plural(len(seen), "lease"), strings.Join(parts, ", "))
	}
	r.ledger.record(Event{Kind: EvRescue, At: now, Worker: r.Name, Outcome: "swept", Rows: int64(len(seen)), Text: text, Trace: tr})
	return nil
}

// rescue is the rescuer's write: each lease it read, back to Pending (reading first if it
// holds none).
func (r *Rescuer) rescue(ctx context.Context, quiet bool) error {
	if len(r.seen) == 0 {
		if err := r.scan(ctx, quiet); err != nil {
			return err
		}
	}
	now := r.clock.Now()
	guarded := r.settings.get().GuardedRescue
	for _, e := range r.seen {
		tr := startTrace(r.env, r.conn)
		res, err := r.rc.Rescue(ctx, RescueRequest{Seen: e, Now: now, Guarded: guarded, Fail: r.fails})
		tr = stopTrace(r.conn, tr)
		if err != nil {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
		// A guarded rescue that changed the row found it still Processing under the lease it
		// read: no finalize can have committed in between. An unguarded one is judged by the
		// ledger (a finalize it records late is left to the count of outcomes written twice).
		finishedSince := !guarded && r.ledger.commitsOf(e.IdempotencyKey) > r.seenCommits[e.IdempotencyKey]
		ev := Event{Kind: EvRescue, At: now, Worker: r.Name, Key: e.IdempotencyKey, Version: e.LeaseVersion, Trace: tr}
		switch {
		case res.Rescued && finishedSince:
			r.counts.Rescued++
			r.counts.RescuedFinished++
			ev.Outcome, ev.Rows = "rescued-finished", 1
			ev.Text = fmt.Sprintf("%s rescued %s with UPDATE … WHERE Id = %d alone: 1 row, but %s had finalized it since the sweep read it: a Processed message is Pending again, to be processed again",
				r.Name, e.IdempotencyKey, e.ID, e.LockedBy)
		case res.Rescued:
			r.counts.Rescued++
			ev.Outcome, ev.Rows = "rescued", 1
			ev.Text = fmt.Sprintf("%s rescued %s (%s's lease v%d had ended): Pending again, claimable", r.Name, e.IdempotencyKey, e.LockedBy, e.LeaseVersion)
		default:
			r.counts.Refused++
			ev.Outcome = "refused"
			ev.Text = fmt.Sprintf("%s's guarded rescue of %s changed 0 rows: it is no longer Processing under %s lease v%d with the lease ended; nothing changed",
				r.Name, e.IdempotencyKey, e.LockedBy, e.LeaseVersion)
		}
		if r.fails {
			ev.Text = pruneText(ev.Outcome, r.Name, e) // prune.go
		}
		if res.Rescued {
			r.env.world.Add(1)
		}
		if res.Rescued && guarded {
			r.ledger.freed(e.IdempotencyKey, e.LeaseVersion, now)
		}
		r.ledger.record(ev)
	}
	r.seen, r.seenCommits = nil, nil
	return nil
}

// Sweep is one sweep of the rescuer, off the script: its read of the expired leases and a rescue
// of each (guarded or not as guarded-rescue is now), as a sweeper on a schedule of its own does
// it (stress's rescuer, on a goroutine beside the workers). Only one goroutine at a time may
// sweep, and none may step the script meanwhile: the rescuer's own state is not locked (the
// ledger, the clock and the settings it reads are). ErrNotNow when the scenario has no rescuer.
func (r *Rescuer) Sweep(ctx context.Context) error {
	if r == nil {
		return fmt.Errorf("sweep: the run has no rescuer: %w", ErrNotNow)
	}
	return r.rescue(ctx, true)
}

// due sweeps when the rescuer's schedule says so during a run step: one read and its
// rescues, then the next sweep is Every later. It reports whether it swept.
func (r *Rescuer) due(ctx context.Context) (bool, error) {
	if r == nil || r.every <= 0 || r.clock.Now().Before(r.next) {
		return false, nil
	}
	r.next = r.clock.Now().Add(r.every)
	return true, r.rescue(ctx, true)
}

// nextSweep is the run's next timer t, or the rescuer's next sweep when that comes first.
// The rescuer alone never keeps a run going: with no worker timer there is nothing to wait for.
func (r *Rescuer) nextSweep(t time.Time) time.Time {
	if r != nil && r.every > 0 && !t.IsZero() && r.next.Before(t) {
		return r.next
	}
	return t
}

// summary is the summary's rescuer section, nil without a rescuer.
func (r *Rescuer) summary() *RescuerSummary {
	if r == nil {
		return nil
	}
	c := r.counts
	return &c
}

// Check IDs of the rescuer and of skewed clocks; shown only in runs that have them.
const (
	CheckNoUndoneFinish = "no-undone-finish"
	CheckNoEarlyReclaim = "no-early-reclaim"
)

// extraChecks are the checks of the rescuer (when the run has one) and of skewed clocks (when a
// worker's clock is off, or provider fencing is on).
func (v *runView) extraChecks(sum *Summary) []Check {
	var out []Check
	if r := sum.Rescuer; r != nil {
		name, short := undoneFinishNames(v.sc.Rescuer.Fails) // prune.go
		out = append(out, Check{ID: CheckNoUndoneFinish, Name: name,
			Short: short,
			OK:    r.RescuedFinished == 0,
			Detail: fmt.Sprintf("%d of %d "+rescuesWord(v.sc.Rescuer.Fails)+" undid a finalize that committed after the sweep's read; %d guarded "+rescuesWord(v.sc.Rescuer.Fails)+" changed 0 rows",
				r.RescuedFinished, r.Rescued, r.Refused)})
	}
	if c := sum.Clocks; c != nil {
		out = append(out, Check{ID: CheckNoEarlyReclaim, Name: "no lease reclaimed before it ended, by the one true clock",
			Short:  "no live lease reclaimed (one true clock)",
			OK:     c.EarlyReclaims == 0,
			Detail: fmt.Sprintf("%d reclaimed while live (two owners at once); %d provider calls refused as stale", c.EarlyReclaims, c.FencedCalls)})
	}
	if c, ok := v.outageCheck(sum); ok {
		out = append(out, c)
	}
	for i := range out {
		out[i].Decides = v.sc.decides(out[i].ID)
	}
	return out
}

// ClockSummary is what skewed clocks and provider fencing did, counted from the run.
type ClockSummary struct {
	Skews         map[string]string `json:"skews"`
	EarlyReclaims int               `json:"early_reclaims"`
	FencedCalls   int               `json:"fenced_calls"`
}

// clockSummary is the summary's clocks section, nil when no clock is off and the provider does
// not fence.
func (v *runView) clockSummary() *ClockSummary {
	if !v.sc.Skewed() && !v.initial.ProviderFencing && !v.boundaryLesson() {
		return nil
	}
	c := &ClockSummary{Skews: map[string]string{}}
	for _, w := range v.sc.Workers {
		if w.Skew != 0 {
			c.Skews[WorkerName(w.Short)] = fmt.Sprintf("%+dms", w.Skew.Milliseconds())
		}
	}
	c.EarlyReclaims, c.FencedCalls = v.env.clocks.counts()
	return c
}

// extraMetric reads the rescuer's and the clocks' counts for an expectation.
func (sum *Summary) extraMetric(name string) (int, bool) {
	var r RescuerSummary
	if sum.Rescuer != nil {
		r = *sum.Rescuer
	}
	var c ClockSummary
	if sum.Clocks != nil {
		c = *sum.Clocks
	}
	v, ok := map[string]int{"rescues": r.Rescued, "rescues_refused": r.Refused, "rescued_finished": r.RescuedFinished,
		"rescue_sweeps": r.Sweeps, "early_reclaims": c.EarlyReclaims, "fenced_calls": c.FencedCalls}[name]
	return v, ok
}

// extraMetricNames are the names extraMetric reads.
var extraMetricNames = []string{"rescues", "rescues_refused", "rescued_finished", "rescue_sweeps", "early_reclaims", "fenced_calls"}
