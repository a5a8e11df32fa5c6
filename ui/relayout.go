package ui

import (
	"leaselab/ui/caption"
	"leaselab/ui/checks"
	"leaselab/ui/ledgers"
	"leaselab/ui/verdict"
)

// relayout recomputes the panes' sizes after a resize, a new frame or a toggled pane. It runs
// in Update, so View only renders.
func (m *Model) relayout() {
	w := m.width
	if w == 0 && m.height == 0 {
		w = defaultWidth
	}
	helpLines := 1
	if m.showHelp {
		helpLines = len(m.help().fullHelpLines(w))
	}
	c := content{
		ledgerLines:  func(w int, wide bool) int { return len(ledgers.Pane{Scene: m.scene()}.Body(w)) },
		checkLines:   func(w int, wide bool) int { return checks.Pane{Scene: m.scene()}.Want(w, wide) },
		verdictLines: func(w int) int { return len(verdict.Pane{Scene: m.scene()}.Lines(w)) },
		captionLines: func(w int) int { return len(m.caption.Lines(m.scene(), w)) },
		helpLines:    helpLines,
		helpOpen:     m.showHelp,
		captionAuto:  m.caption.Mode == caption.Auto,
		statusLines:  m.statusLine().Lines(w),
		noteLines:    m.statusLine().NoteLines(w),
		extras:       m.panes.wants(m.scene(), w),
		pinned:       m.panes.pinned(m.scene()),
	}
	if f := m.frame; f != nil {
		c.rows, c.workers = len(f.Rows), len(f.Workers)
		c.checkFloor = checks.Floor(f)
		c.done = f.Done
	}
	m.layout = plan(m.width, m.height, c)
	scrolled := m.outbox.Keys.Down.Enabled()
	m.outbox.SetSize(m.layout.width, m.layout.tableRows, m.layout.tableTitle, c.rows)
	if m.outbox.Keys.Down.Enabled() != scrolled && m.showHelp {
		// The ? screen lists the scroll keys only when they work: its height changed.
		c.helpLines = len(m.help().fullHelpLines(w))
		m.layout = plan(m.width, m.height, c)
		m.outbox.SetSize(m.layout.width, m.layout.tableRows, m.layout.tableTitle, c.rows)
	}
	m.panes = m.panes.setSizes(m.layout.width, m.layout.extras)
	l := m.layout
	m.diagram.SetSize(l.width, max(0, l.height-l.header-l.diagramStatus(c.noteLines)-l.help))
	m.sql.SetSize(l.width, l.height)
}
