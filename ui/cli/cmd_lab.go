package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mattn/go-isatty"

	"leaselab/assets"
	"leaselab/ui"
	"leaselab/ui/plain"
)

const labUsage = `Usage: leaselab [lab] [flags]

Opens the lab: a terminal screen that steps competing workers over a real SQLite outbox and
shows every row's Status, LockedBy and LockedUntilUtc as the database holds them. Press ? in
the lab for its keys. It needs a terminal; for pipes and scripts use "leaselab run".
With --plain (or LEASELAB_PLAIN=1) it prints what each key changed as sentences instead, ASCII
and never redrawn, for a screen reader or a log; it reads single keys from a terminal, one key
a line from a pipe. --theme projector draws the lab in high contrast for a projector.
`

func cmdLab(ctx context.Context, b Backends, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("lab", labUsage, stderr)
	var sf scenarioFlags
	sf.register(fs, nil)
	start := fs.String("scenario", assets.Default, "scenario to open: a built-in name or a file")
	var face labFace
	face.register(fs)
	code := fs.String("code", "", "open the lab at the moment a share code carries (leaselab share, the lab's S, explore)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageFlag(err)
	}
	if len(pos) > 0 {
		return usageError{fmt.Errorf("lab: unexpected argument %q (did you mean \"leaselab run %s\"?)", pos[0], pos[0])}
	}
	if err := face.check(fs); err != nil {
		return usageError{err}
	}
	// The explore key's searches and the violations they find, and a share code's scenario file:
	// a folder made when first needed, removed when the lab ends.
	tmp := &lazyDir{}
	defer tmp.remove()
	shared, err := labCode(*code, fs, tmp, start)
	if err != nil {
		return err
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
	if face.plain {
		return plain.Run(ctx, plain.Config{Start: *start, Open: root.Open, In: stdin, Out: stdout, Replay: shared.Moves()})
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
		Theme:         face.theme,
	}
	cfg.Share, cfg.Replay = labShare(root, shared, cfg.TranscriptDir), shared.Moves()
	return ui.Run(ctx, cfg)
}

// labCode opens the lab's (or plain mode's) --code, nil without one: its settings are parsed
// into fs, its scenario becomes the start, and its scenario file (if it carries one) is written
// into tmp. Its moves (Moves) are made once the scenario is open.
func labCode(code string, fs *flag.FlagSet, tmp *lazyDir, start *string) (*sharedMoment, error) {
	if code == "" {
		return nil, nil
	}
	shared, err := openCode(code, tmp.get)
	if err != nil {
		return nil, err
	}
	if err := shared.applyCode(fs); err != nil {
		return nil, err
	}
	*start = shared.scenario
	return shared, nil
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
