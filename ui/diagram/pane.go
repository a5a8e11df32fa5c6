package diagram

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/ui/common"
)

// Step is how many columns one press of the diagram's scroll keys moves it.
const Step = 8

// Pane is the space-time diagram (t), shown in the place of the other panes: shown or
// not, its size, and how far it is scrolled back from the latest column (0 keeps the latest on
// screen as the run goes on).
type Pane struct {
	Keys   Keys
	On     bool
	Scroll int
	W, H   int
}

// New returns the pane, hidden.
func New() Pane { return Pane{Keys: DefaultKeys()} }

// SetSize gives the diagram the lines between the header and the status line.
func (p *Pane) SetSize(w, h int) { p.W, p.H = w, h }

// ShortHelp is the pane's keys (help.KeyMap).
func (p Pane) ShortHelp() []key.Binding { return []key.Binding{p.Keys.Toggle} }

// FullHelp is the pane's keys (help.KeyMap).
func (p Pane) FullHelp() [][]key.Binding {
	return [][]key.Binding{{p.Keys.Toggle, p.Keys.Earlier, p.Keys.Later}}
}

// Update takes the pane's keys: t shows or hides it, { and } scroll it in time (and say why
// they do nothing while it is hidden). ok is false for any other key; out is a common.NoteMsg.
func (p Pane) Update(msg tea.Msg, s common.Scene) (_ Pane, out tea.Msg, ok bool) {
	k, isKey := msg.(tea.KeyMsg)
	if !isKey {
		return p, nil, false
	}
	switch {
	case key.Matches(k, p.Keys.Toggle):
		p.On, p.Scroll = !p.On, 0
		p.Keys.Earlier.SetEnabled(p.On)
		p.Keys.Later.SetEnabled(p.On)
		if !p.On {
			return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("the outbox again: %s draws the run as a space-time diagram", common.KeyName(p.Keys.Toggle))}}, true
		}
		return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("space-time diagram: a bar per lease, from claim to LockedUntilUtc; %s closes it",
			common.KeyName(p.Keys.Toggle))}}, true
	case key.Matches(k, p.Keys.Earlier, p.Keys.Later):
		most := ScrollMax(p.Input(s))
		d := Step
		if key.Matches(k, p.Keys.Later) {
			d = -d
		}
		p.Scroll = min(max(p.Scroll+d, 0), most)
		if most == 0 {
			return p, common.NoteMsg{Status: common.Status{Text: "the whole run fits on screen: nothing to scroll"}}, true
		}
		return p, nil, true
	case common.HasKey(k, p.Keys.Earlier, p.Keys.Later): // off: the diagram is hidden
		return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("%s and %s scroll the diagram: %s shows it first",
			common.KeyName(p.Keys.Earlier), common.KeyName(p.Keys.Later), common.KeyName(p.Keys.Toggle)), Level: common.LevelWarn}}, true
	}
	return p, nil, false
}

// Input is what the diagram draws now, in the pane's size.
func (p Pane) Input(s common.Scene) Input {
	in := Input{Width: p.W, Height: p.H, Scroll: p.Scroll,
		Hint:  common.KeyNames(p.Keys.Earlier, p.Keys.Later) + " earlier/later",
		Paint: func(i int, str string) string { return s.Styles.Worker(i).Render(str) }}
	if f := s.Frame; f != nil {
		in.Name, in.Events, in.Dropped = f.Name, f.Events, max(0, f.EventCount-len(f.Events))
		for _, w := range f.Workers {
			in.Workers = append(in.Workers, w.Name)
		}
	}
	return in
}

// View draws the diagram in the pane's size ("" when it has no lines).
func (p Pane) View(s common.Scene) string {
	if p.H <= 0 {
		return ""
	}
	return Render(p.Input(s))
}
