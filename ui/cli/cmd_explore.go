package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/explore"
	"leaselab/engine/scenario"
	"leaselab/engine/share"
)

const exploreUsage = `Usage: leaselab explore NAME|FILE [flags]

Searches every schedule of the scenario's workers from its start, breadth-first, on a real
SQLite file (or, with --db postgres://…, a PostgreSQL schema of its own): each worker's next action, a crash, the clock moving past a lease (by any worker's
clock) or to a worker's timer, the rescuer's read and write. Every move is a real transaction,
and every safety check is taken after every move. The first violation found is a shortest one:
it is printed in the scenario language, and --out writes it as a scenario file that
"leaselab run FILE" reproduces. With none within the bounds, it prints what was proved.
With --checkpoint FILE the search is saved at the end of every level, and --resume FILE goes on
from there. --no-reduce searches every order of every move (docs/explore.md: the reductions).
Exit codes: 0 no violation within the bounds, 1 a violation found, 2 usage, 3 environment.
`

func cmdExplore(ctx context.Context, b Backends, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	c, err := parseExplore(b, args, stderr)
	if err != nil {
		return 0, err
	}
	return c.run(ctx, b, stdin, stdout, stderr)
}

// exploreConfig is one leaselab explore as its flags give it: the scenario, the bounds, what
// to search for, how states are restored, and what to do with a violation found.
type exploreConfig struct {
	sf                               scenarioFlags
	bounds                           explore.Bounds
	checks, out, restore             string
	checkpoint, resume               string
	ids                              []string
	how                              explore.Restore
	asJSON, noReduce, open, coresSet bool
	progress                         time.Duration
	cores                            int
	from                             *explore.Checkpoint // the --resume file's search
	src                              []byte              // the scenario file's text
	sc                               *engine.Scenario
	name                             string           // the scenario as given: a lesson's name or a file
	over                             engine.Overrides // the scenario's settings as the flags give them (share codes)
}

// parseExplore is the flags of leaselab explore made a checked exploreConfig, its scenario
// loaded and its --resume file read.
func parseExplore(b Backends, args []string, stderr io.Writer) (*exploreConfig, error) {
	fs := newFlagSet("explore", exploreUsage, stderr)
	c := &exploreConfig{}
	c.sf.register(fs, nil)
	def := explore.DefaultBounds()
	fs.IntVar(&c.bounds.Depth, "depth", def.Depth, "longest schedule searched, in moves")
	fs.IntVar(&c.bounds.Crashes, "crashes", def.Crashes, "crashes in a schedule, at most")
	fs.IntVar(&c.bounds.ClockMoves, "clock-moves", def.ClockMoves, "clock moves in a schedule, at most")
	fs.IntVar(&c.bounds.Pauses, "pauses", def.Pauses, "pauses in a schedule, at most (not stepping a worker is already a pause)")
	fs.IntVar(&c.bounds.MaxStates, "max-states", def.MaxStates, "distinct states kept in memory, at most; past it new states are checked, not explored")
	fs.DurationVar(&c.bounds.TimeLimit, "time-limit", def.TimeLimit, "stop the search after this long (0: no limit)")
	fs.StringVar(&c.checks, "check", "", "comma-separated check ids to search for (default: every safety check)")
	fs.StringVar(&c.out, "out", "", "write the violation found as a scenario file (a new file; never overwritten)")
	fs.StringVar(&c.restore, "restore", string(explore.RestoreRows), "how a state's database is restored: rows, memory, file or replay (docs/benchmarks.md); PostgreSQL: rows")
	fs.BoolVar(&c.asJSON, "json", false, "print a machine-readable result instead of the text")
	fs.DurationVar(&c.progress, "progress", 2*time.Second, "print a progress line on stderr this often (0: never)")
	fs.StringVar(&c.checkpoint, "checkpoint", "", "save the search at the end of every level to this file (a new file, or the --resume one)")
	fs.StringVar(&c.resume, "resume", "", "go on from a --checkpoint file (same scenario, flags and bounds; --depth may be deeper)")
	fs.IntVar(&c.cores, "cores", min(runtime.NumCPU(), 2), "search on this many SQLite files at once, one worker each (the result is the same; PostgreSQL: 1)")
	fs.BoolVar(&c.noReduce, "no-reduce", false, "search every order of every move: no symmetry between interchangeable workers, no sleep sets (docs/explore.md)")
	fs.BoolVar(&c.open, "open", false, "open the violation found in the lab, to step through it (with --out, that file)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, usageFlag(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return nil, usageError{fmt.Errorf("explore: want one scenario (a name or a file), got %d", len(pos))}
	}
	fs.Visit(func(f *flag.Flag) { c.coresSet = c.coresSet || f.Name == "cores" })
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, c.load(b, pos[0], fs)
}

// Validate refuses bounds, --cores, --restore and --check out of range, --open with --json,
// and an --out or --checkpoint file that would be written over, naming the flag.
func (c *exploreConfig) Validate() error {
	if err := checkBounds(c.bounds, c.progress); err != nil {
		return err
	}
	if c.cores < 1 || c.cores > 64 {
		return usageError{fmt.Errorf("--cores %d: want 1 to 64", c.cores)}
	}
	c.how = explore.Restore(c.restore)
	if !slices.Contains([]explore.Restore{explore.RestoreRows, explore.RestoreMemory, explore.RestoreFile, explore.RestoreReplay}, c.how) {
		return usageError{fmt.Errorf("--restore %s: want rows, memory, file or replay", c.restore)}
	}
	var err error
	if c.ids, err = checkIDs(c.checks); err != nil {
		return err
	}
	if c.open && c.asJSON {
		return usageError{errors.New("--open opens the lab on the terminal: drop --json, or --open")}
	}
	if c.out != "" {
		if _, err := os.Lstat(c.out); err == nil {
			return usageError{fmt.Errorf("--out %s: the file exists; it is never overwritten (remove it or pick a new name)", c.out)}
		}
	}
	return nil
}

// load reads the --resume file and the scenario, and refuses a checkpoint file that would be
// written over and a lesson whose moves are not whole transactions.
func (c *exploreConfig) load(b Backends, name string, fs *flag.FlagSet) error {
	var err error
	if c.resume != "" {
		if c.from, err = readCheckpoint(c.resume); err != nil {
			return err
		}
	}
	if c.checkpoint != "" && c.checkpoint != c.resume {
		if _, err := os.Lstat(c.checkpoint); err == nil {
			return usageError{fmt.Errorf("--checkpoint %s: the file exists; it is only written over when it is the --resume file", c.checkpoint)}
		}
	}
	if c.src, _, err = assets.Load(name, scenario.MaxScenarioSize); err != nil {
		return usageError{err}
	}
	if c.sc, err = loadScenario(b, name, &c.sf, fs); err != nil {
		return err
	}
	c.name = name
	c.over, _ = c.sf.overrides(fs) // loadScenario checked them
	if c.sc.Backend != "" {
		// skip-locked's lesson is a claim stopped between its locking read and its UPDATE, a
		// transaction left open: a state no copy of the rows brings back.
		return usageError{fmt.Errorf("explore %s: a %s lesson of a claim's transaction left open; explore's moves are whole transactions", c.sc.Name, c.sc.Backend)}
	}
	return nil
}

// run searches on the --db database (and more SQLite files with --cores), then writes what it
// found.
func (c *exploreConfig) run(ctx context.Context, b Backends, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	dbs := c.sf.dbs(b, false)
	db, _, cleanup, err := dbs.open(ctx)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	defer db.Close()
	tmp, err := os.MkdirTemp("", runFolderPrefix(os.Getpid()))
	if err != nil {
		return 0, fmt.Errorf("temporary folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	more, closeMore, err := c.moreDBs(ctx, b, dbs.path, tmp)
	defer closeMore()
	if err != nil {
		return 0, err
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		// A search allocates a little for every call on its tape and every row it copies, and
		// keeps little: the collector runs a fourth as often, under a soft limit of 1 GiB
		// (docs/benchmarks.md: 14 % less CPU on aba-fencing).
		defer debug.SetGCPercent(debug.SetGCPercent(400))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	}
	res, err := explore.Run(ctx, c.config(db, more, tmp, stderr))
	if errors.Is(err, explore.ErrNotThisSearch) {
		return 0, usageError{fmt.Errorf("--resume %s: %w", c.resume, err)}
	}
	if err != nil {
		return 0, err
	}
	return c.report(ctx, b, res, tmp, stdin, stdout, stderr)
}

// moreDBs makes the extra SQLite files of --cores (none on PostgreSQL, or with one core);
// closeAll closes those it made, even when it fails part way.
func (c *exploreConfig) moreDBs(ctx context.Context, b Backends, path, tmp string) (more []engine.DB, closeAll func(), err error) {
	var opened []engine.Backend
	closeAll = func() {
		for i := len(opened) - 1; i >= 0; i-- {
			opened[i].Close()
		}
	}
	if c.cores <= 1 || b.isServer(path) || (c.how != explore.RestoreRows && !c.coresSet) {
		return nil, closeAll, nil
	}
	if c.how != explore.RestoreRows {
		return nil, closeAll, usageError{fmt.Errorf("--cores %d: several databases at once restore rows; leave --restore %s out", c.cores, c.how)}
	}
	for i := 1; i < c.cores; i++ {
		extra, err := b.File.Create(ctx, filepath.Join(tmp, fmt.Sprintf("worker-%d.db", i)), false, false)
		if err != nil {
			return nil, closeAll, err
		}
		opened = append(opened, extra)
		more = append(more, extra)
	}
	return more, closeAll, nil
}

// config is the search's explore.Config.
func (c *exploreConfig) config(db engine.DB, more []engine.DB, tmp string, stderr io.Writer) explore.Config {
	cfg := explore.Config{Scenario: c.sc, DB: db, MoreDBs: more, Bounds: c.bounds, Checks: c.ids, Restore: c.how, TempDir: tmp, Now: time.Now,
		ProgressEvery: c.progress, NoSymmetry: c.noReduce, NoSleepSets: c.noReduce, Resume: c.from}
	if c.checkpoint != "" {
		cfg.Checkpoint = func(cp *explore.Checkpoint) error { return writeCheckpoint(c.checkpoint, cp) }
	}
	if c.progress > 0 {
		cfg.Progress = func(st explore.Stats) { fmt.Fprintln(stderr, st.Progress()) }
	}
	return cfg
}

// report writes the search's result, and the violation found: as a scenario file (--out), in
// the lab (--open).
func (c *exploreConfig) report(ctx context.Context, b Backends, res *explore.Result, tmp string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	code, err := c.shareCode(res)
	if err != nil {
		return 0, err
	}
	if c.asJSON {
		if err := writeJSON(stdout, struct {
			explore.JSON
			ShareCode string `json:"share_code,omitempty"`
		}{res.JSON(), code}); err != nil {
			return 0, err
		}
	} else if err := res.WriteText(stdout); err != nil {
		return 0, err
	}
	if code != "" && !c.asJSON {
		fmt.Fprintf(stdout, "share code: %s (%d characters; leaselab --code CODE opens the lab at its end)\n", code, len(code))
	}
	if res.Cut != "" && res.Checkpointed > 0 && !c.asJSON {
		fmt.Fprintf(stdout, "checkpoint: %s holds the search to depth %d; --resume %s goes on from there\n", c.checkpoint, res.Checkpointed, c.checkpoint)
	}
	if res.Violation == nil {
		return exitOK, nil
	}
	file := c.out
	if file == "" && c.open {
		file = filepath.Join(tmp, c.sc.Name+"-found.scenario")
	}
	if file != "" {
		if err := writeFound(file, c.src, c.sc, res.Violation); err != nil {
			return 0, err
		}
		if c.out != "" && !c.asJSON {
			fmt.Fprintf(stdout, "Scenario written: %s (leaselab run %s fails the same check)\n", c.out, c.out)
		}
	}
	if c.open {
		// The lab's own --scenario: space steps the schedule, b steps back, v shows the SQL.
		if err := cmdLab(ctx, b, []string{"--scenario", file}, stdin, stdout, stderr); err != nil {
			return 0, err
		}
	}
	return exitExpect, nil
}

// shareCode is the code of the violation res found ("" when none): the scenario (the lesson's
// name, or the file's text), the flags' settings and the schedule.
func (c *exploreConfig) shareCode(res *explore.Result) (string, error) {
	if res.Violation == nil {
		return "", nil
	}
	lesson, file := c.name, []byte(nil)
	if _, _, ok := assets.Scenario(c.name); !ok {
		lesson, file = "", c.src
	}
	return share.Encode(share.Counterexample(lesson, file, c.over, res.Violation))
}

// checkBounds refuses a bound that makes no sense, naming its flag.
func checkBounds(b explore.Bounds, progress time.Duration) error {
	for _, f := range []struct {
		name string
		v    int
		min  int
	}{{"depth", b.Depth, 1}, {"crashes", b.Crashes, 0}, {"clock-moves", b.ClockMoves, 0}, {"pauses", b.Pauses, 0}, {"max-states", b.MaxStates, 1}} {
		if f.v < f.min {
			return usageError{fmt.Errorf("--%s %d: want at least %d", f.name, f.v, f.min)}
		}
	}
	if b.TimeLimit < 0 {
		return usageError{fmt.Errorf("--time-limit %s: want 0 (no limit) or more", b.TimeLimit)}
	}
	if progress < 0 {
		return usageError{fmt.Errorf("--progress %s: want 0 (never) or more", progress)}
	}
	return nil
}

// checkIDs reads --check: nil for every safety check.
func checkIDs(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var ids []string
	for _, id := range strings.Split(s, ",") {
		id = strings.TrimSpace(id)
		if !slices.Contains(explore.SafetyChecks(), id) {
			return nil, usageError{fmt.Errorf("--check %s: want safety checks among %s", id, strings.Join(explore.SafetyChecks(), ", "))}
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// writeFound writes the violation's scenario file, a new file.
func writeFound(path string, src []byte, sc *engine.Scenario, v *explore.Violation) error {
	var buf bytes.Buffer
	if err := explore.WriteScenario(&buf, src, sc, v); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return usageError{fmt.Errorf("--out %s: the file exists; it is never overwritten", path)}
		}
		return fmt.Errorf("--out %s: %w", filepath.Clean(path), err)
	}
	_, werr := f.Write(buf.Bytes())
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return nil
}

// readCheckpoint reads --resume's file.
func readCheckpoint(path string) (*explore.Checkpoint, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, usageError{fmt.Errorf("--resume %s: %w", path, err)}
	}
	if !fi.Mode().IsRegular() {
		return nil, usageError{fmt.Errorf("--resume %s: not a regular file", path)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError{fmt.Errorf("--resume %s: %w", path, err)}
	}
	defer f.Close()
	c, err := explore.ReadCheckpoint(f)
	if err != nil {
		return nil, usageError{fmt.Errorf("--resume %s: %w", path, err)}
	}
	return c, nil
}

// writeCheckpoint writes c to path whole or not at all: to a new file beside it, then renamed
// over it.
func writeCheckpoint(path string, c *explore.Checkpoint) error {
	tmp := path + ".partial"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("--checkpoint %s: %w", path, err)
	}
	_, werr := c.WriteTo(f)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("--checkpoint %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("--checkpoint %s: %w", path, err)
	}
	return nil
}
