package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"leaselab/ui/common"
)

// View renders the screen from the last frame; it does no I/O.
func (m Model) View() string {
	if m.quitting {
		return ""
	}
	l := m.layout
	if l.tooSmall {
		return m.tooSmallView()
	}
	if m.sql.open { // the SQL pane covers the window but for the status line
		s := m.scene()
		lines := paneLines(m.sql.View(s), l.width, m.sql.bodyHeight()+1)
		lines = append(lines, m.statusView(l.width, 1)...)
		lines = append(lines, m.sql.hint(s))
		return strings.Join(common.Box(lines, l.width, l.height), "\n")
	}
	if m.showHelp { // the ? screen covers the panes; the status line stays, a question with it
		lines := m.headerView()[:l.header]
		lines = append(lines, m.help().view(l.width, l.help)...)
		lines = append(lines, m.statusView(l.width, l.status)...)
		return strings.Join(common.Box(lines, l.width, l.height), "\n")
	}
	if m.diagram.on { // in the place of the panes, between the header and the status line
		lines := m.headerView()
		if m.diagram.h > 0 {
			d := strings.Split(m.diagram.View(m.scene()), "\n")
			// The history's timeline takes the diagram's last line when the diagram left it blank.
			if last := len(d) - 1; m.timelineLines() > 0 && strings.TrimSpace(ansi.Strip(d[last])) == "" {
				d[last] = common.Pad(m.styles.Subtle.Render(m.timelineView(l.width)), l.width)
			}
			lines = append(lines, d...)
		}
		lines = append(lines, m.statusView(l.width, l.diagramStatus(m.noteLines(l.width)))...)
		lines = append(lines, m.help().view(l.width, l.help)...)
		return strings.Join(common.Box(lines, l.width, l.height), "\n")
	}
	lines := make([]string, 0, l.height)
	lines = append(lines, m.headerView()...)
	lines = append(lines, paneLines(m.outbox.View(m.scene()), l.width, m.outbox.height())...)
	lines = append(lines, m.workers.Lines(m.frame, m.changes, &m.styles, l.width, l.workersTitle, l.workerLines)...)
	lines = append(lines, m.rowView()...)
	lines = append(lines, common.Box(m.verdictLines(l.width), l.width, l.verdict)...)
	lines = append(lines, m.captionView(l.width, l.caption)...)
	lines = append(lines, eventsPane{m.scene()}.eventsView(l.width, l.events)...)
	lines = append(lines, m.panes.view(m.scene(), l.width)...)
	lines = append(lines, m.statusView(l.width, l.status)...)
	lines = append(lines, m.help().view(l.width, l.help)...)
	return strings.Join(common.Box(lines, l.width, l.height), "\n")
}

// tooSmallView asks for a bigger terminal, within the one there is.
func (m Model) tooSmallView() string { return tooSmallScreen(m.layout.width, m.layout.height) }

// tooSmallScreen is the screen below the minimum size: what the lab needs, centred in w×h.
func tooSmallScreen(w, h int) string {
	msg := []string{
		fmt.Sprintf("terminal too small (need %d×%d, have %d×%d)", minWidth, minHeight, w, h),
		"make the window larger, or press " + common.KeyName(DefaultKeyMap().Quit) + " to quit",
	}
	lines := make([]string, 0, h)
	top := max(0, (h-len(msg))/2)
	for i := 0; i < top; i++ {
		lines = append(lines, "")
	}
	for _, s := range msg {
		lines = append(lines, common.Spaces((w-common.Width(s))/2)+s)
	}
	return strings.Join(common.Box(lines, w, h), "\n")
}
