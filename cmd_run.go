package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/store"
)

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
	db, note, cleanup, err := openRun(ctx, dbPath, store.Options{})
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
