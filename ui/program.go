package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"leaselab/ui/common"
)

// The lab and the watch are built the same way for whatever terminal they draw on: the local one
// (leaselab, leaselab watch) or one SSH session's (leaselab serve). A Program owns what must stop
// when the screen ends; whoever runs the Bubble Tea program — Run here, or wish's middleware —
// calls Close once it has returned.

// Terminal is the terminal one program draws on.
type Terminal struct {
	In  io.Reader
	Out io.Writer
	// Renderer decides the colour profile of every style. nil: a new renderer on Out, which reads
	// the profile from Out and the environment (NO_COLOR included). Two programs never share one.
	Renderer *lipgloss.Renderer
	// Width and Height are the window's size when it is known at start (an SSH pty); 0: wait
	// for the first WindowSizeMsg.
	Width, Height int
	// Options are further program options.
	Options []tea.ProgramOption
	// Theme names the style set (common.Theme): "" or "default", "projector".
	Theme string
}

// renderer returns the terminal's renderer, or a new one on its output.
func (t Terminal) renderer() *lipgloss.Renderer {
	if t.Renderer != nil {
		return t.Renderer
	}
	if t.Out != nil {
		return lipgloss.NewRenderer(t.Out)
	}
	return lipgloss.NewRenderer(os.Stdout)
}

// sized reports whether the terminal's size is known at start.
func (t Terminal) sized() bool { return t.Width > 0 && t.Height > 0 }

// Program is one Bubble Tea program (the lab or the watch) with the cleanup its model needs.
type Program struct {
	name   string // "lab" or "watch", for errors
	prog   *tea.Program
	outer  context.Context
	cancel context.CancelFunc
	stop   func() // the model's own cleanup, after cancel
	once   sync.Once
	closed atomic.Bool // Close was called: the program's end is no error
	// The lab's gate and free runner (nil for the watch), for the tests.
	gate   *gate
	runner *freeRunner
}

// newProgram builds a program: build makes the model under the program's own context (which
// Close cancels) with the terminal's styles, and returns the cleanup that Close runs after.
func newProgram(ctx context.Context, name string, t Terminal, build func(ctx context.Context, st common.Styles) (tea.Model, func())) (*Program, error) {
	st, err := common.Theme(t.Theme, t.renderer())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	inner, cancel := context.WithCancel(ctx)
	m, stop := build(inner, st)
	// Signals are the caller's, never Bubble Tea's: its handler and the caller's would both take
	// SIGINT and SIGTERM, and when the caller's context ends the program first, Bubble Tea's
	// handler blocks for ever sending its own quit to a loop that is gone, and the program's
	// shutdown waits on it: the first Ctrl-C or kill was lost (2 to 4 times in 6). The caller's
	// context (RunWithSignals' first signal, the server's end of a lab) is the one way to stop.
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(inner), tea.WithoutSignalHandler()}
	if t.In != nil {
		opts = append(opts, tea.WithInput(t.In))
	}
	if t.Out != nil {
		opts = append(opts, tea.WithOutput(t.Out))
	}
	opts = append(opts, t.Options...)
	return &Program{name: name, prog: tea.NewProgram(m, opts...), outer: ctx, cancel: cancel, stop: stop}, nil
}

// Tea is the Bubble Tea program, for a runner that is not Run (wish's bubbletea middleware),
// and for Send. Whoever runs it must call Close after its Run has returned.
func (p *Program) Tea() *tea.Program { return p.prog }

// Run runs the program until the user quits or ctx ends, then Close. An end through ctx (SIGINT,
// SIGTERM) or Close is a normal way out, not an error; a panic (recovered by Bubble Tea) is one.
func (p *Program) Run() error {
	_, err := p.prog.Run()
	p.Close()
	if err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, tea.ErrProgramPanic) &&
			(p.outer.Err() != nil || p.closed.Load()) {
			return nil
		}
		return fmt.Errorf("%s: %w", p.name, err)
	}
	return nil
}

// Close ends the program if it still runs (its context is cancelled, which kills it), waits for
// the engine command in flight, refuses new ones, and stops free-running workers, so that the
// caller may close the session at once. It may be called more than once, from any goroutine.
func (p *Program) Close() {
	p.once.Do(func() {
		p.closed.Store(true)
		p.cancel()
		p.stop()
	})
}

// NewLab builds the lab for terminal t. cfg.In and cfg.Out are not used: t says where it draws.
func NewLab(ctx context.Context, cfg Config, t Terminal) (*Program, error) {
	if cfg.Open == nil {
		return nil, errors.New("lab: no way to open a scenario (Config.Open is nil)")
	}
	var g *gate
	var r *freeRunner
	p, err := newProgram(ctx, "lab", t, func(ctx context.Context, st common.Styles) (tea.Model, func()) {
		m := New(ctx, cfg, st)
		m.free.pace = m.free.pace.Floor(cfg.MinPace)
		if t.sized() {
			m, _ = m.update(tea.WindowSizeMsg{Width: t.Width, Height: t.Height})
		}
		g, r = m.gate, m.runner
		var tm tea.Model = m
		if cfg.Report != nil {
			tm = offering{Model: m, report: cfg.Report}
		}
		return tm, func() {
			g.close()
			// A free run started by a command that finished after the last key stops here.
			_ = r.stop()
		}
	})
	if err != nil {
		return nil, err
	}
	p.gate, p.runner = g, r
	return p, nil
}

// NewWatch builds the watch for terminal t. cfg.In and cfg.Out are not used.
func NewWatch(ctx context.Context, cfg WatchConfig, t Terminal) (*Program, error) {
	if cfg.DB == nil {
		return nil, errors.New("watch: no database (WatchConfig.DB is nil)")
	}
	return newProgram(ctx, "watch", t, func(ctx context.Context, st common.Styles) (tea.Model, func()) {
		m := newWatch(ctx, cfg, st)
		if t.sized() {
			m, _ = m.update(tea.WindowSizeMsg{Width: t.Width, Height: t.Height})
		}
		return m, func() {} // its reads end with its context
	})
}
