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
	fs := newFlagSet("explore", exploreUsage, stderr)
	var sf scenarioFlags
	sf.register(fs, nil)
	def := explore.DefaultBounds()
	depth := fs.Int("depth", def.Depth, "longest schedule searched, in moves")
	crashes := fs.Int("crashes", def.Crashes, "crashes in a schedule, at most")
	clockMoves := fs.Int("clock-moves", def.ClockMoves, "clock moves in a schedule, at most")
	pauses := fs.Int("pauses", def.Pauses, "pauses in a schedule, at most (not stepping a worker is already a pause)")
	maxStates := fs.Int("max-states", def.MaxStates, "distinct states kept in memory, at most; past it new states are checked, not explored")
	timeLimit := fs.Duration("time-limit", def.TimeLimit, "stop the search after this long (0: no limit)")
	checks := fs.String("check", "", "comma-separated check ids to search for (default: every safety check)")
	out := fs.String("out", "", "write the violation found as a scenario file (a new file; never overwritten)")
	restore := fs.String("restore", string(explore.RestoreRows), "how a state's database is restored: rows, memory, file or replay (docs/benchmarks.md); PostgreSQL: rows")
	asJSON := fs.Bool("json", false, "print a machine-readable result instead of the text")
	progress := fs.Duration("progress", 2*time.Second, "print a progress line on stderr this often (0: never)")
	checkpoint := fs.String("checkpoint", "", "save the search at the end of every level to this file (a new file, or the --resume one)")
	resume := fs.String("resume", "", "go on from a --checkpoint file (same scenario, flags and bounds; --depth may be deeper)")
	cores := fs.Int("cores", min(runtime.NumCPU(), 2), "search on this many SQLite files at once, one worker each (the result is the same; PostgreSQL: 1)")
	noReduce := fs.Bool("no-reduce", false, "search every order of every move: no symmetry between interchangeable workers, no sleep sets (docs/explore.md)")
	open := fs.Bool("open", false, "open the violation found in the lab, to step through it (with --out, that file)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 0, usageFlag(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return 0, usageError{fmt.Errorf("explore: want one scenario (a name or a file), got %d", len(pos))}
	}
	bounds := explore.Bounds{Depth: *depth, Crashes: *crashes, ClockMoves: *clockMoves, Pauses: *pauses,
		MaxStates: *maxStates, TimeLimit: *timeLimit}
	if err := checkBounds(bounds, *progress); err != nil {
		return 0, err
	}
	if *cores < 1 || *cores > 64 {
		return 0, usageError{fmt.Errorf("--cores %d: want 1 to 64", *cores)}
	}
	how := explore.Restore(*restore)
	if !slices.Contains([]explore.Restore{explore.RestoreRows, explore.RestoreMemory, explore.RestoreFile, explore.RestoreReplay}, how) {
		return 0, usageError{fmt.Errorf("--restore %s: want rows, memory, file or replay", *restore)}
	}
	ids, err := checkIDs(*checks)
	if err != nil {
		return 0, err
	}
	if *open && *asJSON {
		return 0, usageError{errors.New("--open opens the lab on the terminal: drop --json, or --open")}
	}
	if *out != "" {
		if _, err := os.Lstat(*out); err == nil {
			return 0, usageError{fmt.Errorf("--out %s: the file exists; it is never overwritten (remove it or pick a new name)", *out)}
		}
	}
	var from *explore.Checkpoint
	if *resume != "" {
		if from, err = readCheckpoint(*resume); err != nil {
			return 0, err
		}
	}
	if *checkpoint != "" && *checkpoint != *resume {
		if _, err := os.Lstat(*checkpoint); err == nil {
			return 0, usageError{fmt.Errorf("--checkpoint %s: the file exists; it is only written over when it is the --resume file", *checkpoint)}
		}
	}
	src, _, err := assets.Load(pos[0], scenario.MaxScenarioSize)
	if err != nil {
		return 0, usageError{err}
	}
	sc, err := loadScenario(b, pos[0], &sf, fs)
	if err != nil {
		return 0, err
	}
	if sc.Backend != "" {
		// skip-locked's lesson is a claim stopped between its locking read and its UPDATE, a
		// transaction left open: a state no copy of the rows brings back.
		return 0, usageError{fmt.Errorf("explore %s: a %s lesson of a claim's transaction left open; explore's moves are whole transactions", sc.Name, sc.Backend)}
	}
	dbs := sf.dbs(b, false)
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
	coresSet := false
	fs.Visit(func(f *flag.Flag) { coresSet = coresSet || f.Name == "cores" })
	var more []engine.DB
	if *cores > 1 && !b.isServer(dbs.path) && (how == explore.RestoreRows || coresSet) {
		if how != explore.RestoreRows {
			return 0, usageError{fmt.Errorf("--cores %d: several databases at once restore rows; leave --restore %s out", *cores, how)}
		}
		for i := 1; i < *cores; i++ {
			extra, err := b.File.Create(ctx, filepath.Join(tmp, fmt.Sprintf("worker-%d.db", i)), false, false)
			if err != nil {
				return 0, err
			}
			defer extra.Close()
			more = append(more, extra)
		}
	}
	cfg := explore.Config{Scenario: sc, DB: db, MoreDBs: more, Bounds: bounds, Checks: ids, Restore: how, TempDir: tmp, Now: time.Now,
		ProgressEvery: *progress, NoSymmetry: *noReduce, NoSleepSets: *noReduce, Resume: from}
	if *checkpoint != "" {
		cfg.Checkpoint = func(c *explore.Checkpoint) error { return writeCheckpoint(*checkpoint, c) }
	}
	if *progress > 0 {
		cfg.Progress = func(st explore.Stats) { fmt.Fprintln(stderr, st.Progress()) }
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		// A search allocates a little for every call on its tape and every row it copies, and
		// keeps little: the collector runs a fourth as often, under a soft limit of 1 GiB
		// (docs/benchmarks.md: 14 % less CPU on aba-fencing).
		defer debug.SetGCPercent(debug.SetGCPercent(400))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	}
	res, err := explore.Run(ctx, cfg)
	if errors.Is(err, explore.ErrNotThisSearch) {
		return 0, usageError{fmt.Errorf("--resume %s: %w", *resume, err)}
	}
	if err != nil {
		return 0, err
	}
	if *asJSON {
		if err := writeJSON(stdout, res.JSON()); err != nil {
			return 0, err
		}
	} else if err := res.WriteText(stdout); err != nil {
		return 0, err
	}
	if res.Cut != "" && res.Checkpointed > 0 && !*asJSON {
		fmt.Fprintf(stdout, "checkpoint: %s holds the search to depth %d; --resume %s goes on from there\n", *checkpoint, res.Checkpointed, *checkpoint)
	}
	if res.Violation == nil {
		return exitOK, nil
	}
	file := *out
	if file == "" && *open {
		file = filepath.Join(tmp, sc.Name+"-found.scenario")
	}
	if file != "" {
		if err := writeFound(file, src, sc, res.Violation); err != nil {
			return 0, err
		}
		if *out != "" && !*asJSON {
			fmt.Fprintf(stdout, "Scenario written: %s (leaselab run %s fails the same check)\n", *out, *out)
		}
	}
	if *open {
		// The lab's own --scenario: space steps the schedule, b steps back, v shows the SQL.
		if err := cmdLab(ctx, b, []string{"--scenario", file}, stdin, stdout, stderr); err != nil {
			return 0, err
		}
	}
	return exitExpect, nil
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
