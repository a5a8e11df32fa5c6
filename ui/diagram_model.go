package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/ui/common"
)

// diagramStep is how many columns one press of the diagram's scroll keys moves it.
const diagramStep = 8

// diagramPane is the space-time diagram (t), shown in the place of the other panes: shown or
// not, its size, and how far it is scrolled back from the latest column (0 keeps the latest on
// screen as the run goes on).
type diagramPane struct {
	keys   diagramKeys
	on     bool
	scroll int
	w, h   int
}

// newDiagramPane returns the pane, hidden.
func newDiagramPane() diagramPane { return diagramPane{keys: defaultDiagramKeys()} }

// SetSize gives the diagram the lines between the header and the status line.
func (p *diagramPane) SetSize(w, h int) { p.w, p.h = w, h }

// ShortHelp is the pane's keys (help.KeyMap).
func (p diagramPane) ShortHelp() []key.Binding { return []key.Binding{p.keys.Toggle} }

// FullHelp is the pane's keys (help.KeyMap).
func (p diagramPane) FullHelp() [][]key.Binding {
	return [][]key.Binding{{p.keys.Toggle, p.keys.Earlier, p.keys.Later}}
}

// Update takes the pane's keys: t shows or hides it, { and } scroll it in time (and say why
// they do nothing while it is hidden). ok is false for any other key; out is a noteMsg.
func (p diagramPane) Update(msg tea.Msg, s common.Scene) (_ diagramPane, out tea.Msg, ok bool) {
	k, isKey := msg.(tea.KeyMsg)
	if !isKey {
		return p, nil, false
	}
	switch {
	case key.Matches(k, p.keys.Toggle):
		p.on, p.scroll = !p.on, 0
		p.keys.Earlier.SetEnabled(p.on)
		p.keys.Later.SetEnabled(p.on)
		if !p.on {
			return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("the outbox again: %s draws the run as a space-time diagram", common.KeyName(p.keys.Toggle))}}, true
		}
		return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("space-time diagram: a bar per lease, from claim to LockedUntilUtc; %s closes it",
			common.KeyName(p.keys.Toggle))}}, true
	case key.Matches(k, p.keys.Earlier, p.keys.Later):
		most := diagramScrollMax(p.input(s))
		d := diagramStep
		if key.Matches(k, p.keys.Later) {
			d = -d
		}
		p.scroll = min(max(p.scroll+d, 0), most)
		if most == 0 {
			return p, common.NoteMsg{Status: common.Status{Text: "the whole run fits on screen: nothing to scroll"}}, true
		}
		return p, nil, true
	case common.HasKey(k, p.keys.Earlier, p.keys.Later): // off: the diagram is hidden
		return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("%s and %s scroll the diagram: %s shows it first",
			common.KeyName(p.keys.Earlier), common.KeyName(p.keys.Later), common.KeyName(p.keys.Toggle)), Level: common.LevelWarn}}, true
	}
	return p, nil, false
}

// input is what the diagram draws now, in the pane's size.
func (p diagramPane) input(s common.Scene) diagramInput {
	in := diagramInput{Width: p.w, Height: p.h, Scroll: p.scroll,
		Hint:  common.KeyNames(p.keys.Earlier, p.keys.Later) + " earlier/later",
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
func (p diagramPane) View(s common.Scene) string {
	if p.h <= 0 {
		return ""
	}
	return renderDiagram(p.input(s))
}

// withDiagramKeys adds t and the diagram's scroll keys to the run group of the ? screen.
func withDiagramKeys(k diagramKeys, groups []helpGroup) []helpGroup {
	for i := range groups {
		if groups[i].title == "run" {
			groups[i].entries = append(groups[i].entries, one(k.Toggle),
				helpEntry{bs: []key.Binding{k.Earlier, k.Later}, desc: "earlier/later in the diagram", off: "once " + common.KeyName(k.Toggle) + " shows it"})
		}
	}
	return groups
}
