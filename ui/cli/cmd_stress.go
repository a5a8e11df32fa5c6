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
	fs := newFlagSet("stress", stressUsage, stderr)
	sc := &engine.Scenario{Messages: 5000, Settings: engine.DefaultSettings()}
	sc.Settings.Fencing = true
	sc.Settings.Lease = 200 * time.Millisecond
	sc.SetWorkers(8)
	declared := map[string]string{"workers": "8", "messages": "5000", "lease": "200ms", "seed": "0"}
	for _, t := range engine.ToggleNames() {
		on, _ := sc.Settings.Get(t)
		declared[t] = engine.OnOff(on)
	}
	declared[engine.ToggleGuardedRescue] = "on with --rescuer"
	var sf scenarioFlags
	sf.register(fs, declared)
	crash := fs.Float64("crash-rate", 0.01, "chance per action that the worker crashes (then restarts)")
	pause := fs.Float64("pause-rate", 0, "chance per action that the worker pauses (default: the crash rate)")
	jump := fs.Float64("jump-rate", 0, "chance per action that the clock jumps by up to a lease (default: the crash rate)")
	runs := fs.Int("runs", 1, "number of runs; run i uses seed+i")
	timeout := fs.Duration("timeout", 5*time.Minute, "real-time limit of one run, seeding included; a run cut by it fails, its messages counted as unfinished (default: 5m, or 2ms per message above 150,000)")
	fair := fs.Bool("fair-lock", false, "workers take turns for SQLite's write lock in the order they asked (store.Options.FairWriteLock)")
	slots := fs.Int("slots", 0, "make each worker a hosted worker of this many slots (1 to 1000); no faults are injected and no guard toggle applies")
	rescuer := fs.Bool("rescuer", false, "run a rescuer beside the workers: a sweeper that moves expired leases back to Pending (guarded by --guarded-rescue)")
	every := fs.Duration("rescue-every", stress.DefaultRescueEvery, "real time between the rescuer's sweeps")
	asJSON := fs.Bool("json", false, "print the runs as JSON (the table's figures and the rescuer's) instead of the table")
	if err := parseNoArgs(fs, args); err != nil {
		return 0, err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if *slots != 0 {
		if *slots < 0 || *slots > maxSlots {
			return 0, usageError{fmt.Errorf("--slots %d: want 1 to %d", *slots, maxSlots)}
		}
		for _, r := range []string{"crash-rate", "pause-rate", "jump-rate", "fail-rate", "max-attempts", "skew"} {
			if set[r] {
				return 0, usageError{fmt.Errorf("--%s: hosted workers (--slots) run without injected faults", r)}
			}
		}
		// A hosted worker always leases, claims atomically, finalizes guarded and fenced and
		// renews its leases: a toggle would be printed in the header and not obeyed. The
		// rescuer's guard belongs to the rescuer, which may run beside hosted workers.
		for _, name := range slices.Sorted(maps.Keys(set)) {
			if _, err := engine.DefaultSettings().Get(name); err == nil && name != "guarded-rescue" {
				return 0, usageError{fmt.Errorf("--%s: hosted workers (--slots) always claim in batches and finalize guarded and fenced; they take no --%s", name, name)}
			}
		}
		*crash = 0
	}
	// Check the rates in a fixed order, before the defaults are copied, so
	// the error names the flag the user typed.
	for _, rate := range []struct {
		name string
		v    float64
	}{{"--crash-rate", *crash}, {"--pause-rate", *pause}, {"--jump-rate", *jump}} {
		if !(rate.v >= 0 && rate.v <= 0.5) { // also refuses NaN
			return 0, usageError{fmt.Errorf("%s %v: want 0 to 0.5", rate.name, rate.v)}
		}
	}
	if !set["pause-rate"] {
		*pause = *crash
	}
	if !set["jump-rate"] {
		*jump = *crash
	}
	if *timeout <= 0 {
		return 0, usageError{fmt.Errorf("--timeout %s: want a positive duration", *timeout)}
	}
	if *every <= 0 {
		return 0, usageError{fmt.Errorf("--rescue-every %s: want a positive duration", *every)}
	}
	if *runs < 1 || *runs > 10000 {
		return 0, usageError{fmt.Errorf("--runs %d: want 1 to 10000", *runs)}
	}
	o, err := sf.overrides(fs)
	if err == nil {
		err = sc.Apply(o)
	}
	if err != nil {
		return 0, usageError{err}
	}
	if *rescuer && !set[engine.ToggleGuardedRescue] {
		sc.Settings.GuardedRescue = true // the rescuer's guard is on unless turned off
	}
	if !set["timeout"] {
		*timeout = stress.DefaultTimeout(sc.Messages) // 5m, more for the largest runs
	}
	showProgress := isTerminal(stderr)
	results := []*stress.Result{}
	dbs := sf.dbs(b, *fair) // run i re-creates run 1's --db file
	failed := 0
	var stopped error // the interrupt that ended the runs early
	for i := 0; i < *runs; i++ {
		cfg := stress.Config{Workers: len(sc.Workers), Messages: sc.Messages, CrashRate: *crash,
			PauseRate: *pause, JumpRate: *jump, Seed: sc.Seed + int64(i), FailRate: sc.FailRate, Skew: skews(sc),
			Settings: sc.Settings, Timeout: *timeout, Wall: engine.SystemWall{}, Slots: *slots,
			Rescuer: *rescuer, RescueEvery: *every}
		res, err := stressRun(ctx, dbs, cfg, func(done, total int) {
			if showProgress {
				fmt.Fprintf(stderr, "\rrun %d/%d %s %d/%d", i+1, *runs, bar(done, total, 30), done, total)
			}
		})
		if showProgress {
			fmt.Fprint(stderr, "\r\033[K")
		}
		if err != nil && ctx.Err() != nil {
			// Interrupted: the run in progress is dropped; the table shows those that finished.
			stopped = err
			break
		}
		if err != nil {
			return 0, err
		}
		results = append(results, res)
		if !res.OK() {
			failed++
		}
	}
	switch {
	case len(results) > 0 && *asJSON:
		if err := stress.WriteJSON(stdout, sc.Settings, results); err != nil {
			return 0, err
		}
	case len(results) > 0:
		stress.WriteResults(stdout, sc.Settings, results)
	}
	if stopped != nil {
		fmt.Fprintf(stdout, "\ninterrupted: %d of %d runs finished\n", len(results), *runs)
		return 0, stopped
	}
	if failed > 0 && *asJSON {
		return exitExpect, nil // the problems and seeds are in the JSON
	}
	if failed > 0 {
		for _, r := range results {
			if !r.OK() {
				st := sc.Settings
				var toggles strings.Builder
				if *slots == 0 { // a hosted run takes none of these (it obeys none)
					for _, t := range engine.ToggleNames() {
						on, _ := st.Get(t)
						fmt.Fprintf(&toggles, "--%s=%v ", t, on)
					}
					toggles.WriteString(retryFlags(sc))
				}
				if *rescuer {
					fmt.Fprintf(&toggles, "--rescuer --rescue-every %s --guarded-rescue=%v ", *every, st.GuardedRescue)
				}
				// A hosted run injects no faults and refuses the rate flags: its line names --slots.
				faults := fmt.Sprintf("--crash-rate %v --pause-rate %v --jump-rate %v ", *crash, *pause, *jump)
				if *slots > 0 {
					faults = fmt.Sprintf("--slots %d ", *slots)
				}
				fmt.Fprintf(stdout, "\nseed %d: %s\n  reproduce: leaselab stress --workers %d --messages %d --lease %s %s"+
					"%s--fair-lock=%v --timeout %s --seed %d\n",
					r.Seed, strings.Join(r.Problems, "; "), len(sc.Workers), sc.Messages, st.Lease, faults,
					toggles.String(), *fair, *timeout, r.Seed)
			}
		}
		return exitExpect, nil
	}
	return exitOK, nil
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
