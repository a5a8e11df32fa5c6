package ui

import (
	"context"
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
)

// The lab's explore key searches the open scenario, from its start, with the toggles as the
// lab has them now (Config.Explore, as "leaselab explore" does): in the background, its
// progress in the status line, esc cancels it. A violation found is offered: the same key
// opens its scenario file in the lab, to step through; none found, the status line says what
// was proved.

// ExploreFunc searches the scenario nameOrFile with toggles set (engine.Toggle names), calling
// progress now and then with a line of figures, until ctx ends. It is called from a tea.Cmd.
type ExploreFunc func(ctx context.Context, nameOrFile string, toggles map[string]bool, progress func(string)) (ExploreOutcome, error)

// ExploreOutcome is what a search found: Line says it in one line (the violation, or what was
// proved), and File is the violation's scenario file ("" when none was found).
type ExploreOutcome struct {
	Line string
	File string
}

// exploring is a search under way, or the violation it found waiting to be opened.
type exploring struct {
	id       int
	cancel   context.CancelFunc // nil once the search has ended
	progress chan string
	found    string // the violation's file, offered
}

// exploreProgressMsg is a progress line of search id.
type exploreProgressMsg struct {
	id   int
	line string
}

// exploreDoneMsg is the end of search id.
type exploreDoneMsg struct {
	id  int
	out ExploreOutcome
	err error
}

// toggleMap is every toggle of the registry as settings hold them, by name: the lab's own keys
// and the lessons' (j, m, G, c, P), so a search runs with what the lab shows flipped.
func toggleMap(s engine.Settings) map[string]bool {
	out := map[string]bool{}
	for _, t := range engine.Registry() {
		out[t.Name] = t.Of(s)
	}
	return out
}

// explore starts a search of the open scenario, or opens the violation the last one found.
func (m Model) explore() (Model, tea.Cmd) {
	x := m.exploring
	switch {
	case x != nil && x.cancel != nil:
		m.status = common.Status{Text: fmt.Sprintf("explore: a search is under way; %s cancels it", common.KeyName(m.keys.Close))}
		return m, nil
	case x != nil && x.found != "":
		file := x.found
		m.exploring = nil
		return m.reopen(file, "the counterexample")
	case m.frame == nil:
		m.status = common.Status{Text: noSession(m.keys), Level: common.LevelWarn}
		return m, nil
	}
	id := 1
	if x != nil {
		id = x.id + 1
	}
	ctx, cancel := context.WithCancel(m.ctx)
	x = &exploring{id: id, cancel: cancel, progress: make(chan string, 1)}
	m.exploring = x
	m.status = common.Status{Text: fmt.Sprintf("explore: searching %s from its start with these toggles … (%s cancels)", m.target, common.KeyName(m.keys.Close))}
	run, name, toggles := m.cfg.Explore, m.target, toggleMap(m.frame.Settings)
	search := func() tea.Msg {
		defer close(x.progress)
		out, err := run(ctx, name, toggles, func(line string) {
			select { // the newest line only: the status line shows one
			case <-x.progress:
			default:
			}
			select {
			case x.progress <- line:
			default:
			}
		})
		return exploreDoneMsg{id: id, out: out, err: err}
	}
	return m, tea.Batch(search, waitExplore(x))
}

// waitExplore waits for search x's next progress line (nil once it has ended).
func waitExplore(x *exploring) tea.Cmd {
	return func() tea.Msg {
		line, ok := <-x.progress
		if !ok {
			return nil
		}
		return exploreProgressMsg{id: x.id, line: line}
	}
}

// took takes a search's progress and end (k: the lab's keys, which the status line names). It
// returns the search the lab keeps (nil: forgotten), the status line when it has one to say, and
// the command that waits for the next progress line.
func (x *exploring) took(msg tea.Msg, k KeyMap) (_ *exploring, st *common.Status, cmd tea.Cmd) {
	switch msg := msg.(type) {
	case exploreProgressMsg:
		if x == nil || x.id != msg.id || x.cancel == nil {
			return x, nil, nil
		}
		return x, &common.Status{Text: fmt.Sprintf("%s (%s cancels)", msg.line, common.KeyName(k.Close))}, waitExplore(x)
	case exploreDoneMsg:
		if x == nil || x.id != msg.id {
			return x, nil, nil
		}
		x.cancel()
		x.cancel = nil
		switch {
		case errors.Is(msg.err, context.Canceled):
			return nil, &common.Status{Text: "explore: cancelled"}, nil
		case msg.err != nil:
			return nil, &common.Status{Text: "explore: " + msg.err.Error(), Level: common.LevelError}, nil
		case msg.out.File == "":
			return nil, &common.Status{Text: msg.out.Line}, nil
		}
		x.found = msg.out.File
		return x, &common.Status{Text: fmt.Sprintf("%s — %s opens it in the lab (this run ends)", msg.out.Line, common.KeyName(k.Explore)), Level: common.LevelWarn}, nil
	}
	return x, nil, nil
}
