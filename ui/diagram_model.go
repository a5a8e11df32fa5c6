package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// diagramStep is how many columns one press of the diagram's scroll keys moves it.
const diagramStep = 8

// diagramMode is the space-time diagram's state: shown or not, and how far it is scrolled back
// from the latest column (0 keeps the latest on screen as the run goes on).
type diagramMode struct {
	on     bool
	scroll int
}

// diagramKey toggles the diagram (t) or scrolls it in time.
func (m Model) diagramKey(act action) Model {
	switch act {
	case actDiagram:
		m.diagram = diagramMode{on: !m.diagram.on}
		m.keys.setDiagram(m.diagram.on)
		if !m.diagram.on {
			m.status = status{text: fmt.Sprintf("the outbox again: %s draws the run as a space-time diagram", keyName(m.keys.Diagram))}
			return m
		}
		m.status = status{text: fmt.Sprintf("space-time diagram: a bar per lease, from claim to LockedUntilUtc; %s closes it",
			keyName(m.keys.Diagram))}
	case actEarlier, actLater:
		most := diagramScrollMax(m.diagramInput(m.diagramHeight()))
		d := diagramStep
		if act == actLater {
			d = -d
		}
		m.diagram.scroll = min(max(m.diagram.scroll+d, 0), most)
		if most == 0 {
			m.status = status{text: "the whole run fits on screen: nothing to scroll"}
		}
	}
	return m
}

// diagramInput is what the diagram draws now, in h lines.
func (m Model) diagramInput(h int) diagramInput {
	in := diagramInput{Width: m.layout.width, Height: h, Scroll: m.diagram.scroll,
		Hint:  keyNames(m.keys.Earlier, m.keys.Later) + " earlier/later",
		Paint: func(i int, s string) string { return m.styles.worker(i).Render(s) }}
	if f := m.frame; f != nil {
		in.Name, in.Events, in.Dropped = f.Name, f.Events, max(0, f.EventCount-len(f.Events))
		for _, w := range f.Workers {
			in.Workers = append(in.Workers, w.Name)
		}
	}
	return in
}

// diagramHeight is the lines the diagram has: the screen less the header, status and footer.
func (m Model) diagramHeight() int {
	l := m.layout
	return max(0, l.height-l.header-l.status-l.help)
}

// diagramView is the screen with the diagram in the place of the panes, between the header
// and the status line.
func (m Model) diagramView() string {
	l := m.layout
	lines := m.headerView()
	if h := m.diagramHeight(); h > 0 {
		lines = append(lines, strings.Split(renderDiagram(m.diagramInput(h)), "\n")...)
	}
	lines = append(lines, m.statusView(l.width, l.status)...)
	lines = append(lines, m.helpView(l.help)...)
	return strings.Join(box(lines, l.width, l.height), "\n")
}

// disabled is b switched off: the diagram's scroll keys until t shows it (setDiagram).
func disabled(b key.Binding) key.Binding {
	b.SetEnabled(false)
	return b
}

// withDiagramKeys adds t and the diagram's scroll keys to the run group of the ? screen.
func withDiagramKeys(k KeyMap, groups []helpGroup) []helpGroup {
	for i := range groups {
		if groups[i].title == "run" {
			groups[i].entries = append(groups[i].entries, one(k.Diagram),
				helpEntry{[]key.Binding{k.Earlier, k.Later}, "earlier/later in the diagram"})
		}
	}
	return groups
}
