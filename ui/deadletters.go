package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
)

// deadLettersPane is a line under the events while the outbox has dead-lettered rows: how many
// are parked, and the key that redrives the first of them (engine.CmdRedrive, the guarded
// redrive of `leaselab redrive`). It has its line and its key only then, so a run without dead
// letters shows neither, on the screen or on the ? screen.
type deadLettersPane struct {
	redrive key.Binding
	w, h    int
}

func newDeadLettersPane() pane {
	return deadLettersPane{redrive: key.NewBinding(key.WithKeys("V"), key.WithHelp("V", "redrive the first dead letter"))}
}

// ShortHelp is the redrive key while the pane is on screen (help.KeyMap).
func (p deadLettersPane) ShortHelp() []key.Binding {
	if p.h <= 0 {
		return nil
	}
	return []key.Binding{p.redrive}
}

// FullHelp is the redrive key while the pane is on screen (help.KeyMap).
func (p deadLettersPane) FullHelp() [][]key.Binding {
	if p.h <= 0 {
		return nil
	}
	return [][]key.Binding{{p.redrive}}
}

// SetSize gives the pane its size; its key is on while it has a line.
func (p deadLettersPane) SetSize(w, h int) pane {
	p.w, p.h = w, h
	p.redrive.SetEnabled(h > 0)
	return p
}

// Want is a line while a row is dead-lettered.
func (p deadLettersPane) Want(s scene, _ int) int { return b2i(len(deadLettered(s.f)) > 0) }

// Update redrives the first dead-lettered row on the redrive key.
func (p deadLettersPane) Update(msg tea.Msg, s scene) (pane, tea.Msg) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || !key.Matches(k, p.redrive) {
		return p, nil
	}
	keys := deadLettered(s.f)
	if len(keys) == 0 {
		return p, noteMsg{status{text: "no dead letter to redrive", level: levelWarn}}
	}
	return p, opMsg{op{cmd: engine.CmdRedrive{Key: keys[0]}}}
}

// View is the pane's line.
func (p deadLettersPane) View(s scene) string {
	keys := deadLettered(s.f)
	if p.h <= 0 || len(keys) == 0 {
		return ""
	}
	line := fmt.Sprintf("dead letters %d: %s, parked, never claimed again · %s redrives %s (back to Pending, attempts reset)",
		len(keys), strings.Join(keys, ", "), keyName(p.redrive), keys[0])
	return strings.Join(box([]string{s.st.Failed.Render(line)}, p.w, p.h), "\n")
}

// deadLettered are the keys of the frame's dead-lettered rows, in the table's order.
func deadLettered(f *frame) []string {
	if f == nil {
		return nil
	}
	var keys []string
	for _, r := range f.Rows {
		if r.Status == engine.StatusDeadLettered {
			keys = append(keys, r.IdempotencyKey)
		}
	}
	return keys
}
