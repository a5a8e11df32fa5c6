package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/engine/stress"
)

const stressUsage = `Usage: leaselab stress [flags]

Runs real goroutine workers, each on its own connection, over a seeded database, with random
crashes, pauses and clock jumps, then checks: every message finalized exactly once, none lost,
no ownership violation, no row left Processing past its lease. Leasing and fencing are on by
default; with --leasing=false the checker must find duplicates. Exit 1 on any violation, with
the seed that reproduces its conditions.

The table's "least share" is the least busy worker's share of the work. SQLite's write lock is
not fair: a worker that finds it taken sleeps (1 to 100 ms) while the one that just committed
takes it again, so some workers do almost nothing. --fair-lock makes the workers of this process
take turns for the lock in the order they asked; compare the column with and without it.

--rescuer runs a sweeper beside the workers, on its own goroutine and connection: every
--rescue-every of real time it reads the expired leases and moves each back to Pending, guarded
by what it saw (--guarded-rescue, on by default). With --guarded-rescue=false its UPDATE names
the row by Id alone, and the checks catch a finished message set back to Pending (River #1302).
`

func cmdStress(ctx context.Context, b Backends, args []string, stdout, stderr io.Writer) (int, error) {
	c, err := parseStress(args, stderr)
	if err != nil {
		return 0, err
	}
	results, failed, stopped, err := c.runAll(ctx, b, stderr)
	if err != nil {
		return 0, err
	}
	return c.report(stdout, results, failed, stopped)
}

// stressConfig is one leaselab stress as its flags give it: the scenario (workers, messages,
// toggles, failures) and how the runs go.
type stressConfig struct {
	sc                 *engine.Scenario
	sf                 scenarioFlags
	set                map[string]bool // the flags the user gave
	crash, pause, jump float64
	runs               int
	timeout, every     time.Duration
	fair, rescuer      bool
	slots              int
	asJSON             bool
}

// parseStress is the flags of leaselab stress made a checked stressConfig.
func parseStress(args []string, stderr io.Writer) (*stressConfig, error) {
	fs := newFlagSet("stress", stressUsage, stderr)
	c := &stressConfig{sc: &engine.Scenario{Messages: 5000, Settings: engine.DefaultSettings()}, set: map[string]bool{}}
	c.sc.Settings.Fencing = true
	c.sc.Settings.Lease = 200 * time.Millisecond
	c.sc.SetWorkers(8)
	declared := map[string]string{"workers": "8", "messages": "5000", "lease": "200ms", "seed": "0"}
	for _, t := range engine.ToggleNames() {
		on, _ := c.sc.Settings.Get(t)
		declared[t] = engine.OnOff(on)
	}
	for _, t := range engine.Registry() {
		if t.OnWithRescuer {
			declared[t.Name] = "on with --rescuer"
		}
	}
	c.sf.register(fs, declared)
	fs.Float64Var(&c.crash, "crash-rate", 0.01, "chance per action that the worker crashes (then restarts)")
	fs.Float64Var(&c.pause, "pause-rate", 0, "chance per action that the worker pauses (default: the crash rate)")
	fs.Float64Var(&c.jump, "jump-rate", 0, "chance per action that the clock jumps by up to a lease (default: the crash rate)")
	fs.IntVar(&c.runs, "runs", 1, "number of runs; run i uses seed+i")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "real-time limit of one run, seeding included; a run cut by it fails, its messages counted as unfinished (default: 5m, or 2ms per message above 150,000)")
	fs.BoolVar(&c.fair, "fair-lock", false, "workers take turns for SQLite's write lock in the order they asked (store.Options.FairWriteLock)")
	fs.IntVar(&c.slots, "slots", 0, "make each worker a hosted worker of this many slots (1 to 1000); no faults are injected and no guard toggle applies")
	fs.BoolVar(&c.rescuer, "rescuer", false, "run a rescuer beside the workers: a sweeper that moves expired leases back to Pending (guarded by --guarded-rescue)")
	fs.DurationVar(&c.every, "rescue-every", stress.DefaultRescueEvery, "real time between the rescuer's sweeps")
	fs.BoolVar(&c.asJSON, "json", false, "print the runs as JSON (the table's figures and the rescuer's) instead of the table")
	if err := parseNoArgs(fs, args); err != nil {
		return nil, err
	}
	fs.Visit(func(fl *flag.Flag) { c.set[fl.Name] = true })
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, c.complete(fs)
}

// Validate refuses flags that do not fit together or are out of range, naming the flag: a
// hosted run's faults and worker toggles, rates, the timeout, the rescuer's pace and the runs.
func (c *stressConfig) Validate() error {
	if c.slots != 0 {
		if c.slots < 0 || c.slots > maxSlots {
			return usageError{fmt.Errorf("--slots %d: want 1 to %d", c.slots, maxSlots)}
		}
		for _, r := range []string{"crash-rate", "pause-rate", "jump-rate", "fail-rate", "max-attempts", "skew"} {
			if c.set[r] {
				return usageError{fmt.Errorf("--%s: hosted workers (--slots) run without injected faults", r)}
			}
		}
		// A hosted worker always leases, claims atomically, finalizes guarded and fenced and
		// renews its leases: a toggle would be printed in the header and not obeyed. The
		// rescuer's own switches belong to the rescuer, which may run beside hosted workers.
		for _, name := range slices.Sorted(maps.Keys(c.set)) {
			if t, ok := engine.LookupToggle(name); ok && !t.OfRescuer {
				return usageError{fmt.Errorf("--%s: hosted workers (--slots) always claim in batches and finalize guarded and fenced; they take no --%s", name, name)}
			}
		}
	}
	// The rates in a fixed order, so that the error names the flag the user typed.
	for _, rate := range []struct {
		name string
		v    float64
	}{{"--crash-rate", c.crash}, {"--pause-rate", c.pause}, {"--jump-rate", c.jump}} {
		if !(rate.v >= 0 && rate.v <= 0.5) { // also refuses NaN
			return usageError{fmt.Errorf("%s %v: want 0 to 0.5", rate.name, rate.v)}
		}
	}
	switch {
	case c.timeout <= 0:
		return usageError{fmt.Errorf("--timeout %s: want a positive duration", c.timeout)}
	case c.every <= 0:
		return usageError{fmt.Errorf("--rescue-every %s: want a positive duration", c.every)}
	case c.runs < 1 || c.runs > 10000:
		return usageError{fmt.Errorf("--runs %d: want 1 to 10000", c.runs)}
	}
	return nil
}

// complete fills in what the flags left to defaults: a hosted run's rates (none), the pause and
// jump rates (the crash rate), the scenario's overrides, the rescuer's switches and the timeout.
func (c *stressConfig) complete(fs *flag.FlagSet) error {
	if c.slots != 0 {
		c.crash = 0
	}
	if !c.set["pause-rate"] {
		c.pause = c.crash
	}
	if !c.set["jump-rate"] {
		c.jump = c.crash
	}
	o, err := c.sf.overrides(fs)
	if err == nil {
		err = c.sc.Apply(o)
	}
	if err != nil {
		return usageError{err}
	}
	if c.rescuer {
		c.sc.Settings.WithRescuer(func(name string) bool { return c.set[name] })
	}
	if !c.set["timeout"] {
		c.timeout = stress.DefaultTimeout(c.sc.Messages) // 5m, more for the largest runs
	}
	return nil
}

// run is the stress.Config of run i (seed+i).
func (c *stressConfig) run(i int) stress.Config {
	sc := c.sc
	return stress.Config{Workers: len(sc.Workers), Messages: sc.Messages, CrashRate: c.crash,
		PauseRate: c.pause, JumpRate: c.jump, Seed: sc.Seed + int64(i), FailRate: sc.FailRate, Skew: skews(sc),
		Settings: sc.Settings, Timeout: c.timeout, Wall: engine.SystemWall{}, Slots: c.slots,
		Rescuer: c.rescuer, RescueEvery: c.every}
}

// runAll makes the runs, each on a fresh database, with a progress bar on a terminal. An
// interrupt ends them early: stopped is it, and results are the runs that finished.
func (c *stressConfig) runAll(ctx context.Context, b Backends, stderr io.Writer) (results []*stress.Result, failed int, stopped, err error) {
	showProgress := isTerminal(stderr)
	results = []*stress.Result{}
	dbs := c.sf.dbs(b, c.fair) // run i re-creates run 1's --db file
	for i := 0; i < c.runs; i++ {
		res, err := stressRun(ctx, dbs, c.run(i), func(done, total int) {
			if showProgress {
				fmt.Fprintf(stderr, "\rrun %d/%d %s %d/%d", i+1, c.runs, bar(done, total, 30), done, total)
			}
		})
		if showProgress {
			fmt.Fprint(stderr, "\r\033[K")
		}
		if err != nil && ctx.Err() != nil {
			// Interrupted: the run in progress is dropped; the table shows those that finished.
			return results, failed, err, nil
		}
		if err != nil {
			return nil, 0, nil, err
		}
		results = append(results, res)
		if !res.OK() {
			failed++
		}
	}
	return results, failed, nil, nil
}

// report writes the runs' table (or JSON), then how they ended: interrupted, or each failed
// run's problems and the line that reproduces it.
func (c *stressConfig) report(stdout io.Writer, results []*stress.Result, failed int, stopped error) (int, error) {
	switch {
	case len(results) > 0 && c.asJSON:
		if err := stress.WriteJSON(stdout, c.sc.Settings, results); err != nil {
			return 0, err
		}
	case len(results) > 0:
		stress.WriteResults(stdout, c.sc.Settings, results)
	}
	if stopped != nil {
		fmt.Fprintf(stdout, "\ninterrupted: %d of %d runs finished\n", len(results), c.runs)
		return 0, stopped
	}
	if failed > 0 && c.asJSON {
		return exitExpect, nil // the problems and seeds are in the JSON
	}
	if failed == 0 {
		return exitOK, nil
	}
	for _, r := range results {
		if !r.OK() {
			fmt.Fprintf(stdout, "\nseed %d: %s\n  reproduce: %s\n", r.Seed, strings.Join(r.Problems, "; "), c.reproduce(r.Seed))
		}
	}
	return exitExpect, nil
}

// reproduce is the leaselab stress line that runs the run of seed again.
func (c *stressConfig) reproduce(seed int64) string {
	st := c.sc.Settings
	var toggles strings.Builder
	if c.slots == 0 { // a hosted run takes none of these (it obeys none)
		for _, t := range engine.ToggleNames() {
			on, _ := st.Get(t)
			fmt.Fprintf(&toggles, "--%s=%v ", t, on)
		}
		toggles.WriteString(retryFlags(c.sc))
	}
	if c.rescuer {
		fmt.Fprintf(&toggles, "--rescuer --rescue-every %s ", c.every)
		for _, t := range engine.Registry() {
			if t.OfRescuer {
				fmt.Fprintf(&toggles, "--%s=%v ", t.Name, t.Of(st))
			}
		}
	}
	// A hosted run injects no faults and refuses the rate flags: its line names --slots.
	faults := fmt.Sprintf("--crash-rate %v --pause-rate %v --jump-rate %v ", c.crash, c.pause, c.jump)
	if c.slots > 0 {
		faults = fmt.Sprintf("--slots %d ", c.slots)
	}
	return fmt.Sprintf("leaselab stress --workers %d --messages %d --lease %s %s%s--fair-lock=%v --timeout %s --seed %d",
		len(c.sc.Workers), c.sc.Messages, st.Lease, faults, toggles.String(), c.fair, c.timeout, seed)
}

// skews is each worker's clock offset (--skew), by index; nil when no clock is off.
func skews(sc *engine.Scenario) []time.Duration {
	if !sc.Skewed() {
		return nil
	}
	out := make([]time.Duration, len(sc.Workers))
	for i, w := range sc.Workers {
		out[i] = w.Skew
	}
	return out
}

// retryFlags are the reproduce line's flags of failures, retries, skew and the clocks' fixes:
// none for a run that has none of them, whose line is as it was.
func retryFlags(sc *engine.Scenario) string {
	st := sc.Settings
	var b strings.Builder
	if sc.FailRate > 0 || st.Backoff || st.DeadLetter {
		fmt.Fprintf(&b, "--fail-rate %v --backoff=%v --dead-letter=%v ", sc.FailRate, st.Backoff, st.DeadLetter)
		if st.DeadLetter {
			fmt.Fprintf(&b, "--max-attempts %d ", st.MaxAttempts)
		}
	}
	for _, w := range sc.Workers {
		if w.Skew != 0 {
			fmt.Fprintf(&b, "--skew %s=%+dms ", w.Short, w.Skew.Milliseconds())
		}
	}
	if sc.Skewed() {
		fmt.Fprintf(&b, "--db-clock=%v --provider-fencing=%v ", st.DBClock, st.ProviderFencing)
	}
	return b.String()
}

// stressRun runs one stress run on a fresh database from dbs (the --db file or a temporary
// folder, which it removes however the run ends).
func stressRun(ctx context.Context, dbs *dbOpener, cfg stress.Config, progress func(done, total int)) (*stress.Result, error) {
	db, _, cleanup, err := dbs.open(ctx)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	defer db.Close()
	return stress.Run(ctx, db, cfg, progress)
}

// bar draws a progress bar of width w.
func bar(done, total, w int) string {
	if total <= 0 {
		return ""
	}
	n := done * w / total
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", w-n) + "]"
}
