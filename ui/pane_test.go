package ui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
)

// tallyPane is a registered pane for the tests: a line that counts the frame's rows and the
// presses of its key.
type tallyPane struct {
	keys    key.Binding
	w, h    int
	pressed int
}

func newTallyPane() common.Pane {
	return tallyPane{keys: key.NewBinding(key.WithKeys("K"), key.WithHelp("K", "count a press"))}
}

func (p tallyPane) ShortHelp() []key.Binding     { return []key.Binding{p.keys} }
func (p tallyPane) FullHelp() [][]key.Binding    { return [][]key.Binding{{p.keys}} }
func (p tallyPane) SetSize(w, h int) common.Pane { p.w, p.h = w, h; return p }
func (p tallyPane) Want(common.Scene, int) int   { return 1 }

func (p tallyPane) Update(msg tea.Msg, s common.Scene) (common.Pane, tea.Msg) {
	if _, ok := msg.(tea.KeyMsg); ok {
		p.pressed++
		return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("tally pressed %d", p.pressed)}}
	}
	return p, nil
}

func (p tallyPane) View(s common.Scene) string {
	n := 0
	if s.Frame != nil {
		n = len(s.Frame.Rows)
	}
	return fmt.Sprintf("tally: %d rows, %d presses", n, p.pressed)
}

var tallySpec = []paneSpec{{name: "tally", new: newTallyPane, lab: true, watch: true}}

// A registered pane gets lines of its own, its keys, a note on the status line and a group on
// the ? screen, in the lab and in the watch.
func TestRegisteredPane(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.m.panes = panesOf(tallySpec, true)
	l.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	l.must("tally: 6 rows, 0 presses")
	l.press("K", "K")
	l.must("tally: 6 rows, 2 presses", "tally pressed 2")
	l.press("?")
	l.must("K count a press")
	l.send(tea.WindowSizeMsg{Width: 60, Height: 20}) // too small: no pane has lines
	l.must("terminal too small")

	w := newWatcher(t, newShared(t, 4).db, 100, 30)
	w.m.panes = panesOf(tallySpec, false)
	w.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	w.press("K")
	w.must("tally: 4 rows, 1 presses", "tally pressed 1")
	w.press("?")
	w.must("K count a press")
}
