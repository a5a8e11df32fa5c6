package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
)

// scenarioFlags are the flags every command that runs a scenario takes.
type scenarioFlags struct {
	db          string
	reset       bool
	workers     int
	messages    int
	lease       time.Duration
	failRate    float64 // --fail-rate (flags_retry.go)
	maxAttempts int     // --max-attempts (flags_retry.go)
	seed        int64
	toggles     map[string]*bool
	skew        skewFlag // --skew B=+400ms, repeatable (flags_skew.go)
	// notes is where a line for the user goes that is not the command's output (the flag
	// set's output, stderr): a PostgreSQL schema left behind, or leftovers dropped.
	notes io.Writer
}

// register defines the flags; declared says what an unset flag means ("as the scenario
// declares", or the command's own defaults).
func (f *scenarioFlags) register(fs *flag.FlagSet, declared map[string]string) {
	f.notes = fs.Output()
	def := func(name string) string {
		if d, ok := declared[name]; ok {
			return d
		}
		return "as the scenario declares"
	}
	fs.StringVar(&f.db, "db", "", "keep the database in this file (default: a temporary folder, removed at exit); a file that holds rows needs --reset")
	fs.BoolVar(&f.reset, "reset", false, "let --db FILE be emptied when it holds rows (a leaselab database only; other files are never changed)")
	fs.IntVar(&f.workers, "workers", 0, "number of workers (default: "+def("workers")+")")
	fs.IntVar(&f.messages, "messages", 0, "number of payments and outbox messages (default: "+def("messages")+")")
	fs.DurationVar(&f.lease, "lease", 0, "lease length, e.g. 500ms (default: "+def("lease")+")")
	fs.Int64Var(&f.seed, "seed", 0, "seed of the random scheduler (default: "+def("seed")+")")
	f.toggles = map[string]*bool{}
	for _, t := range engine.Registry() {
		f.toggles[t.Name] = fs.Bool(t.Name, false, fmt.Sprintf("%s on (=true) or off (=false) (default: %s)", t.Name, def(t.Name)))
	}
	f.registerRetry(fs, def)
	fs.Var(&f.skew, "skew", "a worker's clock offset, e.g. B=+400ms (repeat for more workers; default: "+def("skew")+")")
}

// overrides returns what was set on the command line. A count or length set to 0 is refused,
// not read as "as declared".
func (f *scenarioFlags) overrides(fs *flag.FlagSet) (engine.Overrides, error) {
	o := engine.Overrides{Workers: f.workers, Messages: f.messages, Lease: f.lease, Toggles: map[string]bool{}, MaxAttempts: f.maxAttempts, Skew: f.skew.m}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		switch {
		case fl.Name == "workers" && f.workers <= 0, fl.Name == "messages" && f.messages <= 0:
			err = fmt.Errorf("--%s %s: want at least 1", fl.Name, fl.Value)
		case fl.Name == "max-attempts" && f.maxAttempts <= 0:
			err = fmt.Errorf("--max-attempts %s: want at least 1", fl.Value)
		case fl.Name == "lease" && engine.CheckLease(f.lease) != nil:
			err = fmt.Errorf("--lease %s: %w", fl.Value, engine.CheckLease(f.lease))
		}
		if p, ok := f.toggles[fl.Name]; ok {
			o.Toggles[fl.Name] = *p
		}
		if fl.Name == "seed" {
			o.Seed = &f.seed
		}
		if fl.Name == "fail-rate" {
			o.FailRate = &f.failRate
		}
	})
	return o, err
}

// parseInterleaved parses flags that may come before or after positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// parseNoArgs parses the flags of a command that takes no positional argument.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageFlag(err)
	}
	if len(pos) > 0 {
		return usageError{fmt.Errorf("%s takes no arguments, got %q", fs.Name(), pos[0])}
	}
	return nil
}

// parseSharedDB parses the flags of a command on a database that processes share (seed, worker,
// watch): it takes no positional argument, and its --db, db, is required.
func parseSharedDB(fs *flag.FlagSet, args []string, db *string) error {
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *db == "" {
		return usageError{fmt.Errorf("%s: --db FILE is required", fs.Name())}
	}
	return nil
}

// loadScenario reads a built-in or file scenario and applies the flags.
func loadScenario(b Backends, nameOrFile string, f *scenarioFlags, fs *flag.FlagSet) (*engine.Scenario, error) {
	data, source, err := assets.Load(nameOrFile, scenario.MaxScenarioSize)
	if err != nil {
		return nil, usageError{err}
	}
	sc, err := scenario.Parse(source, data)
	if err != nil {
		return nil, err
	}
	if err := backendFits(b, sc, f.db); err != nil {
		return nil, err
	}
	o, err := f.overrides(fs)
	if err == nil {
		err = sc.Apply(o)
	}
	if err == nil {
		if err = sc.CheckSize(); err != nil {
			err = fmt.Errorf("--messages %d --workers %d: %w", sc.Messages, len(sc.Workers), err)
		}
	}
	if err != nil {
		return nil, usageError{err}
	}
	return sc, nil
}

// dbs returns the opener of the run's database on b, for this command's flags; fair is
// stress's --fair-lock (Files.Create).
func (f *scenarioFlags) dbs(b Backends, fair bool) *dbOpener {
	return &dbOpener{b: b, path: f.db, reset: f.reset, fair: fair, notes: f.notes}
}

// dbOpener opens the run's database, as often as the command needs it: the --db file, or a fresh
// temporary folder each time. A --db file that holds rows is emptied only with --reset, or when
// it is the very file this process made or was allowed to empty before (stress --runs, --compare,
// the lab's R and scenario switch re-create their own database).
type dbOpener struct {
	b     Backends // what --db may name: a file or a server
	path  string
	reset bool
	fair  bool        // stress --fair-lock: the workers take turns for SQLite's write lock
	ours  os.FileInfo // the --db file as this process last made or emptied it; nil before
	// pgOurs: the --db PostgreSQL schema is one this process made or emptied (backend.go).
	pgOurs bool
	// notes gets the lines openPostgres has for the user (nil: none are written).
	notes io.Writer
}

// mayReset says whether the --db file may be emptied: --reset, or it is still the file this
// process made.
func (o *dbOpener) mayReset() bool {
	if o.reset || o.ours == nil {
		return o.reset
	}
	fi, err := os.Stat(o.path)
	return err == nil && os.SameFile(fi, o.ours)
}

// check runs every check open would run on the --db file, and writes nothing: the lab calls it
// before its screen opens.
func (o *dbOpener) check(ctx context.Context) error {
	if o.path == "" || o.b.isServer(o.path) {
		return nil // PostgreSQL: Create checks everything in its transaction, before any write
	}
	return o.b.File.Check(ctx, o.path, o.mayReset())
}

// open creates the run's database. cleanup removes the temporary folder.
// runFolderPrefix starts the name of every temporary folder process pid makes for a run's
// database: a second stop signal removes them all by this name before the process ends at once.
func runFolderPrefix(pid int) string { return fmt.Sprintf("leaselab-run-%d-", pid) }

func (o *dbOpener) open(ctx context.Context) (db engine.Backend, note string, cleanup func(), err error) {
	if o.b.isServer(o.path) {
		return o.openPostgres(ctx)
	}
	cleanup = func() {}
	note, path, reset := "kept", o.path, false
	if path == "" {
		dir, err := os.MkdirTemp("", runFolderPrefix(os.Getpid()))
		if err != nil {
			return nil, "", cleanup, fmt.Errorf("temporary folder: %w", err)
		}
		cleanup = func() { os.RemoveAll(dir) }
		path, note = filepath.Join(dir, "leaselab.db"), "temporary folder, removed at exit"
	} else {
		reset = o.mayReset()
	}
	file, err := o.b.File.Create(ctx, path, reset, o.fair)
	if err != nil {
		cleanup()
		return nil, "", func() {}, err
	}
	if o.path != "" {
		o.ours, _ = os.Stat(o.path)
	}
	return file, note, cleanup, nil
}

func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}
