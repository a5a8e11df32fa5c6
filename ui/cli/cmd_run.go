package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/engine/share"
	"leaselab/engine/words"
	"leaselab/ui"
)

const runUsage = `Usage: leaselab run NAME|FILE [flags]

Runs a scenario headless over a real SQLite file and prints what the lesson's reports print:
the schema, the timeline, the lease-expiry demo, the per-message ownership table, the ledgers,
the safety checks and the verdict. The same text is saved as a timestamped report.
`

func cmdRun(ctx context.Context, b Backends, args []string, stdout, stderr io.Writer) (int, error) {
	tmp := &lazyDir{} // a share code's scenario file, when it has one
	defer tmp.remove()
	c, err := parseRun(args, stderr, tmp)
	if err != nil {
		return 0, err
	}
	if c.compare {
		return runCompare(ctx, b, c.scenario, &c.sf, c.fs, c.asJSON, c.reportDir, stdout)
	}
	sc, err := loadScenario(b, c.scenario, &c.sf, c.fs)
	if err != nil {
		return 0, err
	}
	var cast *labRecording
	var record func(context.Context, *engine.Session) error // nil: run it headless
	if c.cast != "" {
		w, h, _ := parseCastSize(c.castSize) // checked by Validate
		lessons := lessonsFor(b, c.sf.db)
		record = func(ctx context.Context, sess *engine.Session) (err error) {
			cast, err = recordLab(ctx, sess, lessons, w, h)
			return err
		}
	}
	run, err := runScenarioMoves(ctx, sc, c.sf.dbs(b, false), c.showSQL || c.transcript != "", c.transcript != "", c.shared.Moves(), record)
	run.cast = cast
	if err != nil && run.report == nil {
		return 0, err
	}
	return c.write(sc, run, err, stdout, stderr) // err: the run ended without finishing
}

// runConfig is one leaselab run as its flags give it.
type runConfig struct {
	fs                       *flag.FlagSet // the scenario's overrides are read from it
	sf                       scenarioFlags
	scenario                 string // a name or a file
	asJSON, compare, showSQL bool
	reportDir, transcript    string
	diagram, cast            string // --diagram FILE.svg, --cast FILE (pictures.go, cast.go)
	castSize                 string
	shared                   *sharedMoment // --code: the moment to run from
}

// parseRun is the flags of leaselab run made a checked runConfig; a --code's scenario file, if
// it has one, is written in the folder tmp makes.
func parseRun(args []string, stderr io.Writer, tmp *lazyDir) (*runConfig, error) {
	c := &runConfig{fs: newFlagSet("run", runUsage, stderr)}
	fs := c.fs
	c.sf.register(fs, nil)
	fs.BoolVar(&c.asJSON, "json", false, "print a machine-readable summary instead of the text report")
	fs.StringVar(&c.reportDir, "report-dir", "reports", "save the text report in this folder (\"\" to not save it)")
	fs.BoolVar(&c.compare, "compare", false, "run the scenario three ways (no claim; leasing; leasing and fencing) and print one table")
	fs.BoolVar(&c.showSQL, "sql", false, "print under each timeline line the statements its action ran, as the database ran them")
	fs.StringVar(&c.transcript, "transcript", "", "also write the run as a Markdown handout to this new file (never overwritten)")
	fs.StringVar(&c.diagram, "diagram", "", "also write the run's space-time diagram as SVG to this new file (never overwritten)")
	fs.StringVar(&c.cast, "cast", "", "also record the run as the lab shows it, a screen a step, as an asciicast v2 file (asciinema play) to this new file")
	fs.StringVar(&c.castSize, "cast-size", defaultCastSize, "the --cast screen's size, WIDTHxHEIGHT (at least 80x24)")
	code := fs.String("code", "", "run from the moment a share code carries: its scenario and settings, its moves made, then on to the end")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, usageFlag(err)
	}
	if *code != "" && len(pos) == 0 {
		if c.shared, err = openCode(*code, tmp.get); err != nil {
			return nil, err
		}
		if c.compare {
			return nil, usageError{errors.New("--compare runs a scenario three ways of its own: drop --code, or --compare")}
		}
		if c.cast != "" {
			return nil, usageError{errors.New("--cast records a run from its start, as the lab steps it: drop --code, or --cast (leaselab --code CODE opens the moment in the lab)")}
		}
		pos = []string{c.shared.scenario}
		if err := c.shared.applyCode(fs); err != nil {
			return nil, err
		}
	}
	if *code != "" && c.shared == nil {
		return nil, usageError{fmt.Errorf("run: --code carries its scenario: drop %q", pos[0])}
	}
	if len(pos) != 1 {
		fs.Usage()
		return nil, usageError{fmt.Errorf("run: want one scenario (a name or a file), got %d", len(pos))}
	}
	c.scenario = pos[0]
	return c, c.Validate()
}

// Validate refuses --compare with the flags it sets itself or cannot show, a bad --cast-size,
// and a --transcript (or its picture), --diagram or --cast file that exists or whose folder
// does not: before the run, so that nothing is run for files that cannot be written.
func (c *runConfig) Validate() error {
	if !c.compare {
		if _, _, err := parseCastSize(c.castSize); err != nil {
			return err
		}
		for _, err := range []error{transcriptFree(c.transcript), newFileFree("--transcript", transcriptPicture(c.transcript)),
			newFileFree("--diagram", c.diagram), newFileFree("--cast", c.cast)} {
			if err != nil {
				return err
			}
		}
		return nil
	}
	conflict := ""
	c.fs.Visit(func(fl *flag.Flag) {
		if fl.Name == engine.ToggleLeasing || fl.Name == engine.ToggleFencing {
			conflict = fl.Name
		}
	})
	if conflict != "" {
		return usageError{fmt.Errorf("--compare sets --leasing and --fencing itself; drop --%s", conflict)}
	}
	if c.transcript != "" || c.showSQL || c.diagram != "" || c.cast != "" {
		return usageError{errors.New("--compare prints one table: drop --transcript, --sql, --diagram and --cast, or --compare")}
	}
	return nil
}

// write prints the run's report (or its JSON summary), saves it in --report-dir and the
// transcript, and says how the run ended: stalled is the run's error when it did not finish.
func (c *runConfig) write(sc *engine.Scenario, run headlessRun, stalled error, stdout, stderr io.Writer) (int, error) {
	rep := run.report
	rep.SQL = c.showSQL
	var text strings.Builder
	if err := words.WriteIncident(&text, rep.Incident); err != nil {
		return 0, err
	}
	if err := words.WriteText(&text, rep); err != nil {
		return 0, err
	}
	if stalled != nil {
		fmt.Fprintf(&text, "\nDID NOT FINISH: %v\n", stalled)
	}
	// The report is printed even when it cannot be saved: the run happened, and its figures
	// are worth having. The save error comes after it, and makes the exit code 3.
	var saveErr error
	if c.reportDir != "" {
		rep.Summary.ReportFile, saveErr = saveReport(c.reportDir, sc.Name, rep.RunAt, text.String())
	}
	if c.asJSON {
		if err := writeJSON(stdout, rep.Summary); err != nil {
			return 0, err
		}
	} else {
		fmt.Fprint(stdout, text.String())
		if rep.Summary.ReportFile != "" {
			fmt.Fprintf(stdout, "\nReport saved: %s\n", rep.Summary.ReportFile)
		}
	}
	if err := c.writePictures(rep, run, stdout); err != nil {
		return 0, errors.Join(saveErr, err)
	}
	return c.exit(rep, stalled, saveErr, stderr)
}

// writePictures writes the transcript with its picture beside it, the diagram and the cast the
// flags ask for, and says where.
func (c *runConfig) writePictures(rep *engine.Report, run headlessRun, stdout io.Writer) error {
	saved := func(what, path string) {
		if !c.asJSON {
			fmt.Fprintf(stdout, "%s saved: %s\n", what, path)
		}
	}
	if c.transcript != "" {
		pic := transcriptPicture(c.transcript)
		if err := writeDiagram("--transcript", pic, rep); err != nil {
			return err
		}
		rep.Picture = filepath.Base(pic)
		if err := words.WriteTranscriptFile(ui.OSFiles{}, c.transcript, rep, run.moments); err != nil {
			os.Remove(pic) // ours, and of no use without its transcript
			return err
		}
		saved("Transcript", c.transcript+" (its space-time diagram: "+pic+")")
	}
	if c.diagram != "" {
		if err := writeDiagram("--diagram", c.diagram, rep); err != nil {
			return err
		}
		saved("Diagram", c.diagram)
	}
	if c.cast != "" && run.cast != nil {
		title := "leaselab run " + rep.Summary.Scenario
		if err := writeNewFile("--cast", c.cast, func(w io.Writer) error { return writeCast(w, run.cast, title, rep.RunAt) }); err != nil {
			return err
		}
		saved("Cast", fmt.Sprintf("%s (%d screens; asciinema play %s)", c.cast, len(run.cast.frames), c.cast))
	}
	return nil
}

// exit is the code of a run that stalled (or not) and whose report saved (or not).
func (c *runConfig) exit(rep *engine.Report, stalled, saveErr error, stderr io.Writer) (int, error) {
	// A lesson may expect the watchdog to end its run (watchdog_ended = 1: a poison message
	// retried for ever); the report still says it did not finish.
	expected := stalled != nil && rep.Summary.WatchdogExpected()
	if stalled != nil && !expected {
		fmt.Fprintf(stderr, "leaselab: %v\n", stalled)
	}
	if saveErr != nil {
		return 0, saveErr
	}
	if stalled != nil && !expected {
		return exitExpect, nil
	}
	if rep.Summary.ExpectationsNotJudged != "" && c.shared != nil {
		// A share code's moves took the run off its script, as in the lab: the verdict is the
		// safety checks' alone, and so is the exit code.
		if !rep.Summary.Passed {
			return exitExpect, nil
		}
		return exitOK, nil
	}
	if !rep.Summary.ExpectationsMet {
		return exitExpect, nil
	}
	return exitOK, nil
}

// runScenario runs sc headless on a fresh database (dbs's --db file, or a temporary one) and
// returns its report. A run the engine ended for lack of progress (engine.ErrNoProgress) returns
// its report and that error.
func runScenario(ctx context.Context, sc *engine.Scenario, dbs *dbOpener) (*engine.Report, error) {
	run, err := runScenarioWith(ctx, sc, dbs, false, false)
	return run.report, err
}

// headlessRun is a finished headless run: its report, and the outbox tables of its moments
// (with moments on).
type headlessRun struct {
	report  *engine.Report
	moments map[int]engine.Moment
	cast    *labRecording // the lab's screens, with --cast
}

// runScenarioWith is runScenario, recording each action's SQL (trace) and the outbox table at
// the moments a transcript shows (moments).
func runScenarioWith(ctx context.Context, sc *engine.Scenario, dbs *dbOpener, trace, moments bool) (headlessRun, error) {
	return runScenarioMoves(ctx, sc, dbs, trace, moments, nil, nil)
}

// runScenarioMoves is runScenarioWith that makes moves first (a share code's), as the lab
// made them, then runs on to the end. record, when set, runs the session after the moves (the
// lab stepping it, for --cast); whatever it leaves undone is run to the end after it.
func runScenarioMoves(ctx context.Context, sc *engine.Scenario, dbs *dbOpener, trace, moments bool, moves []engine.Command,
	record func(context.Context, *engine.Session) error) (headlessRun, error) {
	var run headlessRun
	db, note, cleanup, err := dbs.open(ctx)
	if err != nil {
		return run, err
	}
	defer cleanup()
	defer db.Close()
	runAt := time.Now()
	sess, err := engine.NewSession(ctx, sc, db)
	if err != nil {
		return run, err
	}
	sess.TraceSQL(trace)
	if moments {
		sess.RecordMoments()
	}
	if err := share.Replay(ctx, engine.NewHistory(sess, nil), moves); err != nil {
		sess.Close()
		return run, usageError{fmt.Errorf("--code: %w", err)}
	}
	var runErr error
	if record != nil {
		runErr = record(ctx, sess)
	}
	if runErr == nil {
		runErr = sess.Script().RunToEnd(ctx)
	}
	closeErr := sess.Close()
	stalled := errors.Is(runErr, engine.ErrNoProgress) && closeErr == nil
	if err := errors.Join(runErr, closeErr); err != nil && !stalled {
		return run, err
	}
	schema, err := db.Schema(ctx)
	if err != nil {
		return run, err
	}
	run.moments = sess.Moments()
	if run.report, err = sess.BuildReport(ctx, schema, runAt, note); err != nil {
		return headlessRun{}, err
	}
	if !stalled && runErr == nil && run.report.Summary.WatchdogEnded {
		// The lab's steps (record) met the watchdog: the session says so, not an error.
		stalled, runErr = true, stalledRun(run.report.Summary.DidNotFinish)
	}
	if stalled {
		sess.SetWatchdogEnded(run.report.Summary)
	}
	return run, runErr
}

// stalledRun is a run the watchdog ended while the lab stepped it: ErrNoProgress, in the
// session's words.
type stalledRun string

func (e stalledRun) Error() string        { return string(e) }
func (e stalledRun) Is(target error) bool { return target == engine.ErrNoProgress }

// transcriptFree checks, before the run, that --transcript names a new file in a folder that
// exists: a file already there is never overwritten.
func transcriptFree(path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return usageError{fmt.Errorf("--transcript %s: the file exists; it is never overwritten (remove it or pick a new name)", path)}
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("--transcript %s: the folder %s does not exist or is not a folder", path, dir)
	}
	return nil
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
func runCompare(ctx context.Context, b Backends, nameOrFile string, sf *scenarioFlags, fs *flag.FlagSet, asJSON bool, reportDir string, stdout io.Writer) (int, error) {
	var labels, stalls []string
	var sums []*engine.Summary
	dbs := sf.dbs(b, false) // one opener: the second and third runs re-create the first's file
	var saveErr error       // the first report that could not be saved, returned after the table
	for _, m := range compareModes {
		sc, err := loadScenario(b, nameOrFile, sf, fs)
		if err != nil {
			return 0, err
		}
		if err := sc.Apply(engine.Overrides{Toggles: m.toggles}); err != nil {
			return 0, usageError{err}
		}
		rep, err := runScenario(ctx, sc, dbs)
		if err != nil && rep == nil {
			return 0, err
		}
		if err != nil { // ended for lack of progress: its column still shows what it did
			stalls = append(stalls, fmt.Sprintf("%s: %v", m.label, err))
		}
		if reportDir != "" {
			var text strings.Builder
			if err := words.WriteText(&text, rep); err != nil {
				return 0, err
			}
			name := sc.Name + "-" + strings.ReplaceAll(m.label, "+", "-")
			if saveErr == nil {
				rep.Summary.ReportFile, saveErr = saveReport(reportDir, name, rep.RunAt, text.String())
			}
		}
		labels, sums = append(labels, m.label), append(sums, rep.Summary)
	}
	return writeCompared(stdout, labels, sums, stalls, saveErr, asJSON)
}

// writeCompared prints the compared runs' table (or JSON), their saved reports and stalls,
// and returns the exit code: saveErr is the first report that could not be saved.
func writeCompared(stdout io.Writer, labels []string, sums []*engine.Summary, stalls []string, saveErr error, asJSON bool) (int, error) {
	if asJSON {
		out := map[string]*engine.Summary{}
		for i, l := range labels {
			out[l] = sums[i]
		}
		if err := writeJSON(stdout, out); err != nil {
			return 0, err
		}
		return exitOK, saveErr
	}
	if err := words.WriteCompare(stdout, labels, sums); err != nil {
		return 0, err
	}
	for i, s := range sums {
		if s.ReportFile != "" {
			fmt.Fprintf(stdout, "Report saved (%s): %s\n", labels[i], s.ReportFile)
		}
	}
	for _, s := range stalls {
		fmt.Fprintf(stdout, "did not finish: %s\n", s)
	}
	if saveErr != nil {
		return 0, saveErr
	}
	if len(stalls) > 0 {
		return exitExpect, nil
	}
	return exitOK, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// saveReport writes the report under a name of its own: <name>-RunReport-<UTC time to the
// millisecond>.txt, created with O_EXCL so that two runs in the same millisecond (parallel runs
// into one folder) never overwrite each other; the second gets "-2", the next "-3", and so on.
// The file is 0600, like the databases: it holds payment data.
func saveReport(dir, name string, at time.Time, text string) (string, error) {
	if err := reportDirReady(dir); err != nil {
		return "", err
	}
	stamp := strings.ReplaceAll(at.UTC().Format("20060102T150405.000Z"), ".", "")
	base := filepath.Join(dir, fmt.Sprintf("%s-RunReport-%s", name, stamp))
	for n := 1; n <= maxReportSuffix; n++ {
		path := base + ".txt"
		if n > 1 {
			path = fmt.Sprintf("%s-%d.txt", base, n)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // another run's report, or anything else: never overwritten
		}
		if err != nil {
			return "", fmt.Errorf("--report-dir %s: %w", dir, err)
		}
		_, werr := f.WriteString(text)
		if err := errors.Join(werr, f.Close()); err != nil {
			os.Remove(path) // ours (O_EXCL): no half-written report is left behind
			return "", fmt.Errorf("report %s: %w", path, err)
		}
		return path, nil
	}
	return "", fmt.Errorf("--report-dir %s: %s.txt and %d others like it exist already", dir, base, maxReportSuffix-1)
}

// maxReportSuffix bounds the names saveReport tries for one millisecond.
const maxReportSuffix = 1000

// reportDirReady makes dir (and its parents) if it does not exist, and names the cause when it
// cannot: a dangling symbolic link, or something that is not a folder.
func reportDirReady(dir string) error {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(dir)
		st, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("--report-dir %s: a symbolic link to %s, which does not exist (create %s, or remove the link)", dir, target, target)
		case err != nil:
			return fmt.Errorf("--report-dir %s: a symbolic link to %s: %w", dir, target, err)
		case !st.IsDir():
			return fmt.Errorf("--report-dir %s: a symbolic link to %s, which is not a folder", dir, target)
		}
		return nil
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return fmt.Errorf("--report-dir %s: not a folder", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--report-dir %s: %w", dir, err)
	}
	return nil
}
