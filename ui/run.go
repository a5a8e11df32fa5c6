// Package ui is the lab: a Bubble Tea screen that steps the engine and shows every row of the
// outbox as the database holds it. Engine work runs in tea.Cmds, one at a time; View only
// renders the frame the last command read back.
package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"leaselab/engine"
)

// Config is what the lab needs from the command line.
type Config struct {
	// Start is the scenario to open first: a built-in name or a file path.
	Start string
	// Scenarios are the built-in scenario names, in the order tab cycles through them.
	Scenarios []string
	// Open builds a fresh session for a scenario on a fresh (or reset) database, closing the
	// previous one. It is called from a tea.Cmd, never from Update or View.
	Open func(ctx context.Context, nameOrFile string) (*engine.Session, error)
	In   io.Reader
	Out  io.Writer
	// TranscriptDir is where w writes transcripts: beside the --db database; "" for the
	// working folder.
	TranscriptDir string
}

// Run opens the lab and returns when the user quits. It waits for the engine command in flight
// (if any) and stops free-running workers before it returns, so the caller may close the
// session at once.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Open == nil {
		return errors.New("lab: no way to open a scenario (Config.Open is nil)")
	}
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(ctx, cfg, DefaultStyles(lipgloss.DefaultRenderer()))
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx)}
	if cfg.In != nil {
		opts = append(opts, tea.WithInput(cfg.In))
	}
	if cfg.Out != nil {
		opts = append(opts, tea.WithOutput(cfg.Out))
	}
	_, err := tea.NewProgram(m, opts...).Run()
	cancel()
	m.gate.close()
	// A free run started by a command that finished after the last key stops here, before the
	// caller closes the session.
	_ = m.runner.stop()
	if err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && outer.Err() != nil {
			return nil // interrupted from outside (SIGINT): a normal way out
		}
		return fmt.Errorf("lab: %w", err)
	}
	return nil
}

// gate counts the engine commands running, so that Run can wait for them before the caller
// closes the session, and refuses new ones once closed.
type gate struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// enter admits one engine command; false once the gate is closed.
func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	return true
}

// leave ends an admitted command.
func (g *gate) leave() { g.wg.Done() }

// close refuses new commands and waits for the running ones.
func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.wg.Wait()
}
