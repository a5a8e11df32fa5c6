package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mattn/go-isatty"

	"leaselab/assets"
	"leaselab/ui"
)

const labUsage = `Usage: leaselab [lab] [flags]

Opens the lab: a terminal screen that steps competing workers over a real SQLite outbox and
shows every row's Status, LockedBy and LockedUntilUtc as the database holds them. Press ? in
the lab for its keys. It needs a terminal; for pipes and scripts use "leaselab run".
`

func cmdLab(ctx context.Context, b Backends, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("lab", labUsage, stderr)
	var sf scenarioFlags
	sf.register(fs, nil)
	start := fs.String("scenario", assets.Default, "scenario to open: a built-in name or a file")
	code := fs.String("code", "", "open the lab at the moment a share code carries (leaselab share, the lab's S, explore)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageFlag(err)
	}
	if len(pos) > 0 {
		return usageError{fmt.Errorf("lab: unexpected argument %q (did you mean \"leaselab run %s\"?)", pos[0], pos[0])}
	}
	// The explore key's searches and the violations they find, and a share code's scenario file:
	// a folder made when first needed, removed when the lab ends.
	tmp := &lazyDir{}
	defer tmp.remove()
	var shared *sharedMoment
	if *code != "" {
		if shared, err = openCode(*code, tmp.get); err != nil {
			return err
		}
		if err := shared.applyCode(fs); err != nil {
			return err
		}
		*start = shared.scenario
	}
	root := newLabRoot(b, &sf, fs)
	root.caps = labCaps
	defer root.Close()
	if err := root.Check(ctx); err != nil { // a bad --db fails before the screen opens, exit 3
		return err
	}
	// Load the first scenario now, so that a bad name or file, or one too large for the lab,
	// fails before the screen opens.
	if _, err := root.load(*start); err != nil {
		return err
	}
	if !isTerminal(stdin) || !isTerminal(stdout) {
		return usageError{errors.New("the lab needs a terminal (stdin and stdout); for pipes and scripts use \"leaselab run NAME\" (see \"leaselab list\")")}
	}
	cfg := ui.Config{
		Start:     *start,
		Scenarios: lessonsFor(b, sf.db),
		Open:      root.Open,
		Explore:   labExplore(b, root, tmp),
		TempDB:    sf.db == "",
		In:        stdin,
		// w writes transcripts beside the --db database, or in the working folder.
		TranscriptDir: transcriptDir(b, sf.db),
		Out:           stdout,
	}
	cfg.Share, cfg.Replay = labShare(root, shared, cfg.TranscriptDir), shared.Moves()
	return ui.Run(ctx, cfg)
}

// isTerminal reports whether f is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && (isatty.IsTerminal(file.Fd()) || isatty.IsCygwinTerminal(file.Fd()))
}

// transcriptDir is the folder of the --db database file, or "" (the working folder) without
// one or for a PostgreSQL URL.
func transcriptDir(b Backends, db string) string {
	if db == "" || b.isServer(db) {
		return ""
	}
	return filepath.Dir(db)
}
