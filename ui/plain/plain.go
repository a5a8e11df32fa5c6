// Package plain is leaselab --plain: the lab for a screen reader, a braille display or a log.
// It drives the same engine session as the lab with the same keys, and prints what each key
// changed as sentences, appended once and never redrawn: the events, the rows that changed with
// their Status, LockedBy and LockedUntilUtc, the question and its answers when one opens, and
// at the end the checks and the verdict. ASCII only: no escape sequence, no box drawing, no
// spinner, no alternate screen.
package plain

import (
	"context"
	"fmt"
	"io"
	"os"

	xterm "github.com/charmbracelet/x/term"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Config is what plain mode needs.
type Config struct {
	// Start is the scenario to open: a built-in name or a file.
	Start string
	// Open builds a fresh session for a scenario on a fresh database, closing the previous
	// one: the lab's own (ui.Config.Open). Stepping back opens it again and replays.
	Open func(ctx context.Context, nameOrFile string) (*engine.Session, error)
	// In gives the keys: a terminal (single keys, read raw) or anything else (one key a line).
	In io.Reader
	// Out is where the sentences go.
	Out io.Writer
	// Replay are a share code's moves (share.Code.Moves), made on Start once it is open and
	// recorded in the history, so that b steps back through them; nil without a code.
	Replay []engine.Command
}

// Run opens cfg.Start, says what it is, and then, for each key, what it changed, until q,
// ctrl+c, the end of the input or ctx's end. An error that is not the user's (the database
// failed) ends it.
func Run(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &printer{w: cfg.Out}
	l, err := open(ctx, cfg, p)
	if err != nil {
		return err
	}
	if len(cfg.Replay) > 0 {
		if err := l.replay(ctx, cfg.Replay); err != nil {
			return err
		}
	} else {
		intro(p, l.f, l.keys)
	}
	in := make(chan press)
	if f, ok := cfg.In.(*os.File); ok && xterm.IsTerminal(f.Fd()) {
		// Single keys: no echo, no line editing. Raw mode also stops a newline from returning
		// the carriage on the terminal, so the printer writes "\r\n" to it from now on.
		st, err := xterm.MakeRaw(f.Fd())
		if err != nil {
			return fmt.Errorf("plain: read single keys from the terminal: %w", err)
		}
		defer xterm.Restore(f.Fd(), st) //nolint:errcheck // the terminal as it was, at best
		// Only output to a terminal needs it: a log file (leaselab --plain | tee) keeps "\n".
		out, ok := cfg.Out.(*os.File)
		p.crlf = ok && xterm.IsTerminal(out.Fd())
		go readRaw(ctx, f, in)
	} else {
		go readLines(ctx, cfg.In, in)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case k, ok := <-in:
			if !ok {
				p.line("End of input: leaving the lab.")
				return p.err
			}
			quit, err := l.handle(ctx, k)
			if err != nil {
				return err
			}
			if quit || p.err != nil {
				return p.err
			}
		}
	}
}

// open opens cfg.Start and reads its first frame.
func open(ctx context.Context, cfg Config, p *printer) (*lab, error) {
	l := &lab{run: run{open: cfg.Open, name: cfg.Start}, keys: defaultKeys(), p: p}
	if err := l.run.start(ctx); err != nil {
		return nil, err
	}
	f, err := l.run.frame(ctx)
	if err != nil {
		return nil, err
	}
	l.f = f
	return l, nil
}

// lab is plain mode's state: the run, the last frame it said, the selected worker and the open
// question.
type lab struct {
	run      run
	keys     keys
	p        *printer
	f        *common.Frame
	selected int
	ask      *asking // the question waiting for its answer; nil when none
	graded   []asked // answers given, each until its grade has been said
	redrove  string  // the dead letter V redrove last: the next press takes the one after it
}
