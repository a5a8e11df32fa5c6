// Package deadletters is the dead letters pane: the parked rows, and V, which redrives the one
// it marks.
package deadletters

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Pane is a line under the events while the outbox has dead-lettered rows: how many
// are parked, which one the redrive key moves back next (engine.CmdRedrive, the guarded redrive
// of `leaselab redrive`), and that key. V goes round them in the table's order: each press
// redrives the one the line marks ▸ and marks the next, so that every dead letter can be
// chosen, one press at a time. It has its line and its key only while a row is dead-lettered;
// before, the ? screen names the key with when it acts, and a press of it says so (WhyOff). The
// narrow layout gives its line before its optional ones (Pinned).
type Pane struct {
	redrive key.Binding
	after   string // the key V redrove last: the next press takes the dead letter after it
	w, h    int
}

// New returns the dead letters pane, without a line until a row is dead-lettered.
func New() common.Pane {
	return Pane{redrive: key.NewBinding(key.WithKeys("V"), key.WithHelp("V", "redrive the marked dead letter (▸)"))}
}

// ShortHelp is the redrive key while the pane is on screen (help.KeyMap).
func (p Pane) ShortHelp() []key.Binding {
	if p.h <= 0 {
		return nil
	}
	return []key.Binding{p.redrive}
}

// FullHelp is the redrive key, off while the pane has no line (help.KeyMap): the ? screen
// names it then with WhyOff's words.
func (p Pane) FullHelp() [][]key.Binding { return [][]key.Binding{{p.redrive}} }

// WhyOff says when the redrive key acts (common.OffKeys).
func (p Pane) WhyOff(key.Binding) string {
	return "when a row is DeadLettered"
}

// SetSize gives the pane its size; its key is on while it has a line.
func (p Pane) SetSize(w, h int) common.Pane {
	p.w, p.h = w, h
	p.redrive.SetEnabled(h > 0)
	return p
}

// Want is a line while a row is dead-lettered.
func (p Pane) Want(s common.Scene, _ int) int {
	if len(DeadLettered(s.Frame)) > 0 {
		return 1
	}
	return 0
}

// Pinned: the line is pinned while it has a dead letter to name, since V acts on what it marks.
func (p Pane) Pinned(s common.Scene) bool { return len(DeadLettered(s.Frame)) > 0 }

// Update redrives the marked dead letter on the redrive key, and marks the next.
func (p Pane) Update(msg tea.Msg, s common.Scene) (common.Pane, tea.Msg) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || !key.Matches(k, p.redrive) {
		return p, nil
	}
	target := p.target(s.Frame)
	if target == "" {
		return p, common.NoteMsg{Status: common.Status{Text: "no dead letter to redrive", Level: common.LevelWarn}}
	}
	p.after = target
	return p, common.DoMsg{Cmd: engine.CmdRedrive{Key: target}}
}

// target is the dead letter V redrives now: the first in the table's order after the one it
// redrove last, or else the first.
func (p Pane) target(f *common.Frame) string {
	keys := DeadLettered(f)
	if len(keys) == 0 {
		return ""
	}
	after := -1
	for i, r := range f.Rows {
		if r.IdempotencyKey == p.after {
			after = i
		}
	}
	for i, r := range f.Rows {
		if i > after && r.Status == engine.StatusDeadLettered {
			return r.IdempotencyKey
		}
	}
	return keys[0]
}

// View is the pane's line: the longest of its forms that fits.
func (p Pane) View(s common.Scene) string {
	keys := DeadLettered(s.Frame)
	if p.h <= 0 || len(keys) == 0 {
		return ""
	}
	target := p.target(s.Frame)
	marked := make([]string, len(keys))
	for i, k := range keys {
		marked[i] = k
		if k == target && len(keys) > 1 {
			marked[i] = "▸" + k
		}
	}
	list := strings.Join(marked, ", ")
	v := common.KeyName(p.redrive)
	forms := []string{
		fmt.Sprintf("dead letters %d: %s, parked, never claimed again · %s redrives %s (back to Pending, attempts reset)", len(keys), list, v, target),
		fmt.Sprintf("dead letters %d: %s, parked · %s redrives %s (back to Pending, attempts reset)", len(keys), list, v, target),
		fmt.Sprintf("dead letters %d: %s · %s redrives %s", len(keys), list, v, target),
		fmt.Sprintf("dead letters %d · %s redrives %s", len(keys), v, target),
	}
	if len(keys) > 1 {
		forms[0] += ", then the next"
	}
	line := forms[len(forms)-1]
	for _, f := range forms {
		if common.Width(f) <= p.w {
			line = f
			break
		}
	}
	return strings.Join(common.Box([]string{s.Styles.Failed.Render(line)}, p.w, p.h), "\n")
}

// DeadLettered are the keys of the frame's dead-lettered rows, in the table's order.
func DeadLettered(f *common.Frame) []string {
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
