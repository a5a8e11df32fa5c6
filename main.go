// Command leaselab is a terminal lab in which competing workers fight over the rows of a real
// SQLite outbox, and headless runs that print the lesson's reports, checks and verdicts.
//
//	leaselab                     open the lab on the default scenario
//	leaselab run NAME|FILE       run a scenario headless; print and save its report
//	leaselab list                list the built-in scenarios
//
// Exit codes: 0 the scenario's expectations hold; 1 they do not; 2 usage or scenario errors;
// 3 environment errors (the database file or the report folder).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/store"
	"leaselab/ui"

	"github.com/mattn/go-isatty"
)

// Exit codes.
const (
	exitOK       = 0
	exitExpect   = 1
	exitUsage    = 2
	exitEnvError = 3
)

// usageError is a mistake in how leaselab was called or in a scenario.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "lab"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	} else if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stdout, mainUsage)
		fmt.Fprintln(stdout, "\nThe lab's flags: leaselab lab --help.")
		return exitOK
	}
	var err error
	switch cmd {
	case "lab":
		err = cmdLab(ctx, args, stdin, stdout, stderr)
	case "run":
		var code int
		code, err = cmdRun(ctx, args, stdout, stderr)
		if err == nil {
			return code
		}
	case "list":
		err = cmdList(args, stdout, stderr)
	case "seed":
		err = cmdSeed(ctx, args, stdout, stderr)
	case "worker":
		err = cmdWorker(ctx, args, stdout, stderr)
	case "watch":
		err = cmdWatch(ctx, args, stdin, stdout, stderr)
	case "stress":
		var code int
		code, err = cmdStress(ctx, args, stdout, stderr)
		if err == nil {
			return code
		}
	case "help":
		fmt.Fprint(stdout, mainUsage)
		return exitOK
	default:
		err = usageError{fmt.Errorf("unknown command %q", cmd)}
	}
	return report(err, stderr)
}

// report prints err as one line and maps it to an exit code.
func report(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "leaselab: %v\n", err)
	var ue usageError
	var pe *engine.ParseError
	var se *engine.ScriptError
	switch {
	case errors.As(err, &ue), errors.As(err, &pe):
		if ue.err != nil && strings.HasPrefix(ue.Error(), "unknown command") {
			fmt.Fprint(stderr, mainUsage)
		}
		return exitUsage
	case errors.As(err, &se):
		// A script step that could not be carried out is the scenario's fault, unless the
		// database under it failed.
		var env *store.EnvError
		if errors.As(err, &env) || errors.Is(err, engine.ErrBusy) {
			return exitEnvError
		}
		return exitUsage
	}
	return exitEnvError
}

const mainUsage = `leaselab: competing workers, one SQLite outbox, and the lease that makes them safe.

Usage:
  leaselab [flags]             open the lab (a terminal screen) on the default scenario
  leaselab run NAME|FILE       run a scenario headless; print and save its report
  leaselab list                list the built-in scenarios
  leaselab stress [flags]      real goroutine workers, random crashes, pauses and clock jumps
  leaselab seed --db FILE      create (or reset) a shared database and fill it with payments
  leaselab worker --db FILE --name W
                               run one worker process against a shared database
  leaselab watch --db FILE     watch a shared database live, read-only, as the lab shows it
  leaselab help                this text

Run "leaselab COMMAND --help" for a command's flags.
Exit codes: 0 expectations hold, 1 they do not, 2 usage or scenario error, 3 environment error.
`

// scenarioFlags are the flags every command that runs a scenario takes.
type scenarioFlags struct {
	db       string
	workers  int
	messages int
	lease    time.Duration
	seed     int64
	toggles  map[string]*bool
}

// register defines the flags; declared says what an unset flag means ("as the scenario
// declares", or the command's own defaults).
func (f *scenarioFlags) register(fs *flag.FlagSet, declared map[string]string) {
	def := func(name string) string {
		if d, ok := declared[name]; ok {
			return d
		}
		return "as the scenario declares"
	}
	fs.StringVar(&f.db, "db", "", "keep the database in this file (default: a temporary folder, removed at exit)")
	fs.IntVar(&f.workers, "workers", 0, "number of workers (default: "+def("workers")+")")
	fs.IntVar(&f.messages, "messages", 0, "number of payments and outbox messages (default: "+def("messages")+")")
	fs.DurationVar(&f.lease, "lease", 0, "lease length, e.g. 500ms (default: "+def("lease")+")")
	fs.Int64Var(&f.seed, "seed", 0, "seed of the random scheduler (default: "+def("seed")+")")
	f.toggles = map[string]*bool{}
	for _, t := range engine.ToggleNames() {
		f.toggles[t] = fs.Bool(t, false, fmt.Sprintf("%s on (=true) or off (=false) (default: %s)", t, def(t)))
	}
}

// overrides returns what was set on the command line. A count or length set to 0 is refused,
// not read as "as declared".
func (f *scenarioFlags) overrides(fs *flag.FlagSet) (engine.Overrides, error) {
	o := engine.Overrides{Workers: f.workers, Messages: f.messages, Lease: f.lease, Toggles: map[string]bool{}}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		switch {
		case fl.Name == "workers" && f.workers <= 0, fl.Name == "messages" && f.messages <= 0:
			err = fmt.Errorf("--%s %s: want at least 1", fl.Name, fl.Value)
		case fl.Name == "lease" && f.lease <= 0:
			err = fmt.Errorf("--lease %s: want a positive duration, e.g. 500ms", fl.Value)
		}
		if p, ok := f.toggles[fl.Name]; ok {
			o.Toggles[fl.Name] = *p
		}
		if fl.Name == "seed" {
			o.Seed = &f.seed
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

// loadScenario reads a built-in or file scenario and applies the flags.
func loadScenario(nameOrFile string, f *scenarioFlags, fs *flag.FlagSet) (*engine.Scenario, error) {
	data, source, err := assets.Load(nameOrFile, engine.MaxScenarioSize)
	if err != nil {
		return nil, usageError{err}
	}
	sc, err := engine.Parse(source, data)
	if err != nil {
		return nil, err
	}
	o, err := f.overrides(fs)
	if err == nil {
		err = sc.Apply(o)
	}
	if err != nil {
		return nil, usageError{err}
	}
	return sc, nil
}

// openDB creates the run's database: the --db file, or a fresh temporary folder. cleanup
// removes the temporary folder.
func openDB(ctx context.Context, path string, opts store.Options) (db *store.DB, note string, cleanup func(), err error) {
	cleanup = func() {}
	note = "kept"
	if path == "" {
		dir, err := os.MkdirTemp("", "leaselab-run-")
		if err != nil {
			return nil, "", cleanup, fmt.Errorf("temporary folder: %w", err)
		}
		cleanup = func() { os.RemoveAll(dir) }
		path, note = filepath.Join(dir, "leaselab.db"), "temporary folder, removed at exit"
	}
	db, err = store.CreateWith(ctx, path, opts)
	if err != nil {
		cleanup()
		return nil, "", func() {}, err
	}
	return db, note, cleanup, nil
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

func cmdList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", "Usage: leaselab list\n\nLists the built-in scenarios with their titles.\n", stderr)
	if err := fs.Parse(args); err != nil {
		return usageFlag(err)
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("list takes no arguments, got %q", fs.Arg(0))}
	}
	for _, n := range assets.Names() {
		data, src, _ := assets.Scenario(n)
		title := ""
		if sc, err := engine.Parse(src, data); err == nil {
			title = sc.Title
		}
		fmt.Fprintf(stdout, "%-16s %s\n", n, title)
	}
	return nil
}

func usageFlag(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err}
}

const runUsage = `Usage: leaselab run NAME|FILE [flags]

Runs a scenario headless over a real SQLite file and prints what the lesson's reports print:
the schema, the timeline, the lease-expiry demo, the per-message ownership table, the ledgers,
the safety checks and the verdict. The same text is saved as a timestamped report.
`

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("run", runUsage, stderr)
	var sf scenarioFlags
	sf.register(fs, nil)
	asJSON := fs.Bool("json", false, "print a machine-readable summary instead of the text report")
	reportDir := fs.String("report-dir", "reports", "save the text report in this folder (\"\" to not save it)")
	compare := fs.Bool("compare", false, "run the scenario three ways (no claim; leasing; leasing and fencing) and print one table")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 0, usageFlag(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return 0, usageError{fmt.Errorf("run: want one scenario (a name or a file), got %d", len(pos))}
	}
	if *compare {
		conflict := ""
		fs.Visit(func(fl *flag.Flag) {
			if fl.Name == engine.ToggleLeasing || fl.Name == engine.ToggleFencing {
				conflict = fl.Name
			}
		})
		if conflict != "" {
			return 0, usageError{fmt.Errorf("--compare sets --leasing and --fencing itself; drop --%s", conflict)}
		}
		return runCompare(ctx, pos[0], &sf, fs, *asJSON, *reportDir, stdout)
	}
	sc, err := loadScenario(pos[0], &sf, fs)
	if err != nil {
		return 0, err
	}
	rep, err := runScenario(ctx, sc, sf.db)
	if err != nil {
		return 0, err
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		return 0, err
	}
	if *reportDir != "" {
		path, err := saveReport(*reportDir, sc.Name, rep.RunAt, text.String())
		if err != nil {
			return 0, err
		}
		rep.Summary.ReportFile = path
	}
	if *asJSON {
		if err := writeJSON(stdout, rep.Summary); err != nil {
			return 0, err
		}
	} else {
		fmt.Fprint(stdout, text.String())
		if rep.Summary.ReportFile != "" {
			fmt.Fprintf(stdout, "\nReport saved: %s\n", rep.Summary.ReportFile)
		}
	}
	if !rep.Summary.ExpectationsMet {
		return exitExpect, nil
	}
	return exitOK, nil
}

// runScenario runs sc headless on a fresh database (dbPath, or a temporary one) and returns its
// report.
func runScenario(ctx context.Context, sc *engine.Scenario, dbPath string) (*engine.Report, error) {
	db, note, cleanup, err := openDB(ctx, dbPath, store.Options{})
	if err != nil {
		return nil, err
	}
	defer cleanup()
	defer db.Close()
	runAt := time.Now()
	sess, err := engine.NewSession(ctx, sc, db)
	if err != nil {
		return nil, err
	}
	runErr := sess.RunToEnd(ctx)
	closeErr := sess.Close()
	if err := errors.Join(runErr, closeErr); err != nil {
		return nil, err
	}
	schema, err := db.Schema(ctx)
	if err != nil {
		return nil, err
	}
	return sess.BuildReport(ctx, schema, runAt, note)
}

// compareModes are the three ways --compare runs a scenario.
var compareModes = []struct {
	label   string
	toggles map[string]bool
}{
	{"no claim", map[string]bool{engine.ToggleLeasing: false, engine.ToggleFencing: false}},
	{"leasing", map[string]bool{engine.ToggleLeasing: true, engine.ToggleFencing: false}},
	{"leasing+fencing", map[string]bool{engine.ToggleLeasing: true, engine.ToggleFencing: true}},
}

// runCompare runs one scenario three ways, each on its own fresh database, and prints one table
// of their ledgers. It exits 0 when all three runs complete: the point is the comparison.
func runCompare(ctx context.Context, nameOrFile string, sf *scenarioFlags, fs *flag.FlagSet, asJSON bool, reportDir string, stdout io.Writer) (int, error) {
	var labels []string
	var sums []*engine.Summary
	for _, m := range compareModes {
		sc, err := loadScenario(nameOrFile, sf, fs)
		if err != nil {
			return 0, err
		}
		if err := sc.Apply(engine.Overrides{Toggles: m.toggles}); err != nil {
			return 0, usageError{err}
		}
		rep, err := runScenario(ctx, sc, sf.db)
		if err != nil {
			return 0, err
		}
		if reportDir != "" {
			var text strings.Builder
			if err := rep.WriteText(&text); err != nil {
				return 0, err
			}
			name := sc.Name + "-" + strings.ReplaceAll(m.label, "+", "-")
			if rep.Summary.ReportFile, err = saveReport(reportDir, name, rep.RunAt, text.String()); err != nil {
				return 0, err
			}
		}
		labels, sums = append(labels, m.label), append(sums, rep.Summary)
	}
	if asJSON {
		out := map[string]*engine.Summary{}
		for i, l := range labels {
			out[l] = sums[i]
		}
		return exitOK, writeJSON(stdout, out)
	}
	if err := engine.WriteCompare(stdout, labels, sums); err != nil {
		return 0, err
	}
	for i, s := range sums {
		if s.ReportFile != "" {
			fmt.Fprintf(stdout, "Report saved (%s): %s\n", labels[i], s.ReportFile)
		}
	}
	return exitOK, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// saveReport writes the report atomically: a temporary file renamed into place.
func saveReport(dir, name string, at time.Time, text string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("--report-dir %s: %w", dir, err)
	}
	stamp := at.UTC().Format("20060102T150405.000Z")
	path := filepath.Join(dir, fmt.Sprintf("%s-RunReport-%s.txt", name, strings.ReplaceAll(stamp, ".", "")))
	tmp, err := os.CreateTemp(dir, ".report-*")
	if err != nil {
		return "", fmt.Errorf("--report-dir %s: %w", dir, err)
	}
	_, werr := tmp.WriteString(text)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("report %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("report %s: %w", path, err)
	}
	return path, nil
}

const labUsage = `Usage: leaselab [lab] [flags]

Opens the lab: a terminal screen that steps competing workers over a real SQLite outbox and
shows every row's Status, LockedBy and LockedUntilUtc as the database holds them. Press ? in
the lab for its keys. It needs a terminal; for pipes and scripts use "leaselab run".
`

func cmdLab(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("lab", labUsage, stderr)
	var sf scenarioFlags
	sf.register(fs, nil)
	start := fs.String("scenario", assets.Default, "scenario to open: a built-in name or a file")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageFlag(err)
	}
	if len(pos) > 0 {
		return usageError{fmt.Errorf("lab: unexpected argument %q (did you mean \"leaselab run %s\"?)", pos[0], pos[0])}
	}
	if !isTerminal(stdin) || !isTerminal(stdout) {
		return usageError{errors.New("the lab needs a terminal (stdin and stdout); for pipes and scripts use \"leaselab run NAME\" (see \"leaselab list\")")}
	}
	// Load the first scenario now, so that a bad name or file fails before the screen opens.
	if _, err := loadScenario(*start, &sf, fs); err != nil {
		return err
	}
	var closeDB func()
	open := func(ctx context.Context, nameOrFile string) (*engine.Session, error) {
		if closeDB != nil {
			closeDB()
			closeDB = nil
		}
		sc, err := loadScenario(nameOrFile, &sf, fs)
		if err != nil {
			return nil, err
		}
		db, _, cleanup, err := openDB(ctx, sf.db, store.Options{})
		if err != nil {
			return nil, err
		}
		sess, err := engine.NewSession(ctx, sc, db)
		if err != nil {
			db.Close()
			cleanup()
			return nil, err
		}
		closeDB = func() { sess.Close(); db.Close(); cleanup() }
		return sess, nil
	}
	defer func() {
		if closeDB != nil {
			closeDB()
		}
	}()
	return ui.Run(ctx, ui.Config{
		Start:     *start,
		Scenarios: assets.Names(),
		Open:      open,
		In:        stdin,
		Out:       stdout,
	})
}

// isTerminal reports whether f is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && (isatty.IsTerminal(file.Fd()) || isatty.IsCygwinTerminal(file.Fd()))
}

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
`

func cmdStress(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("stress", stressUsage, stderr)
	var sf scenarioFlags
	sf.register(fs, map[string]string{"workers": "8", "messages": "5000", "lease": "200ms", "seed": "0",
		engine.ToggleLeasing: "on", engine.ToggleAtomicClaim: "on", engine.ToggleOwnershipCheck: "on",
		engine.ToggleFencing: "on", engine.ToggleHeartbeat: "off"})
	crash := fs.Float64("crash-rate", 0.01, "chance per action that the worker crashes (then restarts)")
	pause := fs.Float64("pause-rate", 0, "chance per action that the worker pauses (default: the crash rate)")
	jump := fs.Float64("jump-rate", 0, "chance per action that the clock jumps by up to a lease (default: the crash rate)")
	runs := fs.Int("runs", 1, "number of runs; run i uses seed+i")
	timeout := fs.Duration("timeout", 5*time.Minute, "real-time limit of one run")
	fair := fs.Bool("fair-lock", false, "workers take turns for SQLite's write lock in the order they asked (store.Options.FairWriteLock)")
	if pos, err := parseInterleaved(fs, args); err != nil {
		return 0, usageFlag(err)
	} else if len(pos) > 0 {
		return 0, usageError{fmt.Errorf("stress takes no arguments, got %q", pos[0])}
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
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
	if *runs < 1 || *runs > 10000 {
		return 0, usageError{fmt.Errorf("--runs %d: want 1 to 10000", *runs)}
	}
	sc := &engine.Scenario{Messages: 5000, Settings: engine.DefaultSettings()}
	sc.Settings.Fencing = true
	sc.Settings.Lease = 200 * time.Millisecond
	sc.SetWorkers(8)
	o, err := sf.overrides(fs)
	if err == nil {
		err = sc.Apply(o)
	}
	if err != nil {
		return 0, usageError{err}
	}
	showProgress := isTerminal(stderr)
	results := []*engine.StressResult{}
	failed := 0
	for i := 0; i < *runs; i++ {
		cfg := engine.StressConfig{Workers: len(sc.Workers), Messages: sc.Messages, CrashRate: *crash,
			PauseRate: *pause, JumpRate: *jump, Seed: sc.Seed + int64(i), Settings: sc.Settings, Timeout: *timeout}
		db, _, cleanup, err := openDB(ctx, sf.db, store.Options{FairWriteLock: *fair})
		if err != nil {
			return 0, err
		}
		progress := func(done, total int) {
			if showProgress {
				fmt.Fprintf(stderr, "\rrun %d/%d %s %d/%d", i+1, *runs, bar(done, total, 30), done, total)
			}
		}
		res, err := engine.Stress(ctx, db, cfg, progress)
		db.Close()
		cleanup()
		if showProgress {
			fmt.Fprint(stderr, "\r\033[K")
		}
		if err != nil {
			return 0, err
		}
		results = append(results, res)
		if !res.OK() {
			failed++
		}
	}
	engine.WriteStress(stdout, sc.Settings, results)
	if failed > 0 {
		for _, r := range results {
			if !r.OK() {
				st := sc.Settings
				fmt.Fprintf(stdout, "\nseed %d: %s\n  reproduce: leaselab stress --workers %d --messages %d --lease %s --crash-rate %v --pause-rate %v --jump-rate %v "+
					"--leasing=%v --atomic-claim=%v --ownership-check=%v --fencing=%v --heartbeat=%v --fair-lock=%v --seed %d\n",
					r.Seed, strings.Join(r.Problems, "; "), len(sc.Workers), sc.Messages, st.Lease, *crash, *pause, *jump,
					st.Leasing, st.AtomicClaim, st.OwnershipCheck, st.Fencing, st.Heartbeat, *fair, r.Seed)
			}
		}
		return exitExpect, nil
	}
	return exitOK, nil
}

// bar draws a progress bar of width w.
func bar(done, total, w int) string {
	if total <= 0 {
		return ""
	}
	n := done * w / total
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", w-n) + "]"
}

// workerNameRE is what a worker process's --name may be: it goes into LockedBy.
var workerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

const seedUsage = `Usage: leaselab seed --db FILE [--messages N]

Creates FILE as a leaselab database (or empties one that already is) and writes N payments,
each with its outbox message in one transaction, for worker processes to share.
`

func cmdSeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("seed", seedUsage, stderr)
	path := fs.String("db", "", "the database file (required)")
	n := fs.Int("messages", 6, "number of payments and outbox messages")
	if pos, err := parseInterleaved(fs, args); err != nil {
		return usageFlag(err)
	} else if len(pos) > 0 {
		return usageError{fmt.Errorf("seed takes no arguments, got %q", pos[0])}
	}
	if *path == "" {
		return usageError{errors.New("seed: --db FILE is required")}
	}
	if *n < 1 || *n > engine.MaxMessages {
		return usageError{fmt.Errorf("--messages %d: want 1 to %d", *n, engine.MaxMessages)}
	}
	db, err := store.Create(ctx, *path)
	if err != nil {
		return err
	}
	defer db.Close()
	// Many rows a transaction: the same rows engine.Seed writes one payment at a time.
	if err := db.SeedBulk(ctx, *n, time.Now().UTC()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "seeded %d payments with their outbox messages into %s\n", *n, db.Path())
	return nil
}

const workerUsage = `Usage: leaselab worker --db FILE --name W [flags]

Runs one worker, as its own process, against a database that other processes share (made with
"leaselab seed"). It claims, processes and finalizes messages on the wall clock, printing every
action, until no work is left (or it is stopped). Start several in several terminals and watch.
`

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker", workerUsage, stderr)
	path := fs.String("db", "", "the shared database file (required; made by leaselab seed)")
	name := fs.String("name", "", "the worker's name, written to LockedBy (required)")
	lease := fs.Duration("lease", 2*time.Second, "lease length")
	pace := fs.Duration("pace", 0, "pause after every action, e.g. 200ms, to watch it work")
	poll := fs.Duration("poll", 25*time.Millisecond, "how often to poll again when nothing is claimable")
	untilEmpty := fs.Bool("until-empty", true, "stop once no work is left (false: keep polling until stopped)")
	toggles := map[string]*bool{}
	for _, t := range engine.ToggleNames() {
		if t != engine.ToggleLeasing {
			toggles[t] = fs.Bool(t, t != engine.ToggleHeartbeat, t+" on (=true) or off (=false)")
		}
	}
	hold := fs.Duration("hold-finalize", 0, "fault injection: wait this long inside every finalize transaction (for crash tests)")
	if pos, err := parseInterleaved(fs, args); err != nil {
		return usageFlag(err)
	} else if len(pos) > 0 {
		return usageError{fmt.Errorf("worker takes no arguments, got %q", pos[0])}
	}
	switch {
	case *path == "":
		return usageError{errors.New("worker: --db FILE is required")}
	case *name == "":
		return usageError{errors.New("worker: --name is required")}
	case !workerNameRE.MatchString(*name):
		return usageError{fmt.Errorf("--name %q: letters, digits, '-' and '_', up to 32, starting with a letter or digit", *name)}
	case *lease < 2*time.Millisecond:
		return usageError{fmt.Errorf("--lease %s: want at least 2ms", *lease)}
	case *pace < 0, *poll < 0, *hold < 0:
		return usageError{fmt.Errorf("--pace, --poll and --hold-finalize take durations of 0 or more (got %s, %s, %s)", *pace, *poll, *hold)}
	}
	db, err := store.Open(ctx, *path)
	if err != nil {
		return err
	}
	defer db.Close()
	if *hold > 0 {
		db.HoldFinalize(*hold, func(key string) {
			fmt.Fprintf(stdout, "%s %s holding its finalize transaction of %s open for %s\n",
				engine.FormatClock(time.Now()), engine.WorkerName(*name), key, *hold)
		})
	}
	st := engine.DefaultSettings()
	st.Lease, st.HeartbeatEvery = *lease, engine.DefaultHeartbeat(*lease)
	for t, p := range toggles {
		st.Set(t, *p)
	}
	sc := &engine.Scenario{Name: "worker", Title: "worker process", Source: "worker", Settings: st,
		Workers: []engine.WorkerSpec{{Short: *name, ID: engine.WorkerName(*name)}}}
	sess, err := engine.NewSessionWith(ctx, sc, db, engine.SessionOptions{Clock: engine.NewWallClock(time.Now)})
	if err != nil {
		return err
	}
	defer sess.Close()
	w := sess.Workers()[0]
	var last engine.Event
	err = w.Serve(ctx, nil, engine.ServeOptions{Pace: *pace, Poll: *poll, UntilEmpty: *untilEmpty,
		OnEvent: func(e engine.Event) {
			// A blocked worker polls again and again: print a blocked poll once per lease it waits on.
			if e.Kind == engine.EvClaim && e.Outcome == "blocked" && last.Outcome == "blocked" && e.Key == last.Key && e.Until.Equal(last.Until) {
				return
			}
			last = e
			fmt.Fprintln(stdout, e.String())
		}})
	l := sess.Ledger().Worker(w.Name)
	fmt.Fprintf(stdout, "%s done: %d claims won (%d reclaims), %d blocked, %d processed, %d finalized, %d rejected, %d busy retries\n",
		w.Name, l.ClaimsWon, l.Reclaims, l.ClaimsBlocked, l.ProcessingAttempts, l.Finalized, l.RejectedFinalizes, l.BusyRetries)
	return err
}

const watchUsage = `Usage: leaselab watch --db FILE [--interval 200ms]

Opens the lab read-only on a database that worker processes share (made with "leaselab seed",
worked by "leaselab worker" in other terminals): every row's Status, LockedBy and
LockedUntilUtc with its lease bar against the wall clock, the counts, the processing rate, and
who holds what. It never writes. It needs a terminal; p pauses the polling, q quits.
`

func cmdWatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("watch", watchUsage, stderr)
	path := fs.String("db", "", "the shared database file (required; made by leaselab seed)")
	interval := fs.Duration("interval", 200*time.Millisecond, "how often to read the database")
	if pos, err := parseInterleaved(fs, args); err != nil {
		return usageFlag(err)
	} else if len(pos) > 0 {
		return usageError{fmt.Errorf("watch takes no arguments, got %q", pos[0])}
	}
	switch {
	case *path == "":
		return usageError{errors.New("watch: --db FILE is required")}
	case *interval < 10*time.Millisecond:
		return usageError{fmt.Errorf("--interval %s: want at least 10ms", *interval)}
	}
	// Open first: a file that is missing or not ours fails the same way with or without a terminal.
	db, err := store.Open(ctx, *path)
	if err != nil {
		return err
	}
	defer db.Close()
	if !isTerminal(stdin) || !isTerminal(stdout) {
		return usageError{fmt.Errorf("watch needs a terminal (stdin and stdout); in a script, read the database with sqlite3 %s \"select * from OutboxMessages\"", *path)}
	}
	return ui.Watch(ctx, ui.WatchConfig{DB: db, Path: db.Path(), Interval: *interval, Now: time.Now, In: stdin, Out: stdout})
}
