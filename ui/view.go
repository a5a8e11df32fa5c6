package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"leaselab/ui/checks"
	"leaselab/ui/common"
	"leaselab/ui/events"
	"leaselab/ui/header"
	"leaselab/ui/ledgers"
	"leaselab/ui/question"
	"leaselab/ui/status"
	"leaselab/ui/verdict"
)

// View renders the screen from the last frame; it does no I/O: the first overlay that is on
// (overlays), or else the stacked slots (slots) with the registered panes placed after the slot
// they name (panes.go).
func (m Model) View() string {
	if m.quitting {
		return ""
	}
	l := m.layout
	if l.tooSmall {
		return tooSmallScreen(l.width, l.height)
	}
	for _, o := range m.overlays() {
		if o.on {
			return strings.Join(common.Box(o.lines(), l.width, l.height), "\n")
		}
	}
	lines := make([]string, 0, l.height)
	for _, sl := range m.slots() {
		lines = append(lines, sl.lines()...)
		lines = append(lines, m.panes.viewAfter(sl.name, m.scene(), l.width)...)
	}
	return strings.Join(common.Box(lines, l.width, l.height), "\n")
}

// slotName names a place of the lab's screen that a registered pane may stand after.
type slotName string

// The lab's slots, top to bottom.
const (
	slotHeader  slotName = "header"
	slotOutbox  slotName = "outbox"
	slotWorkers slotName = "workers"
	slotRow     slotName = "ledgers|checks"
	slotVerdict slotName = "verdict"
	slotCaption slotName = "caption"
	slotEvents  slotName = "events"
	slotStatus  slotName = "status"
	slotFooter  slotName = "footer"
)

// slot is one place of the screen and its lines, at the height the layout gave it (layout.go).
type slot struct {
	name  slotName
	lines func() []string
}

// slots is the lab's screen under no overlay, declared top to bottom: each slot a pane stacked
// under the one before; the ledgers and the checks stand beside each other in one (rowLines).
func (m Model) slots() []slot {
	l, s := m.layout, m.scene()
	return []slot{
		{slotHeader, m.headerView},
		{slotOutbox, func() []string { return paneLines(m.outbox.View(s), l.width, m.outbox.Height()) }},
		{slotWorkers, func() []string {
			return m.workers.Lines(m.frame, m.changes, &m.styles, l.width, l.workersTitle, l.workerLines)
		}},
		{slotRow, func() []string { return rowLines(l, s) }},
		{slotVerdict, func() []string { return common.Box(verdict.Pane{Scene: s}.Lines(l.width), l.width, l.verdict) }},
		{slotCaption, func() []string { return m.caption.View(s, l.width, l.caption) }},
		{slotEvents, func() []string { return events.Pane{Scene: s}.Lines(l.width, l.events) }},
		{slotStatus, func() []string { return m.statusLine().View(&m.styles, l.width, l.status) }},
		{slotFooter, func() []string { return m.help().view(l.width, l.help) }},
	}
}

// overlay is a screen that covers the slots while it is on.
type overlay struct {
	on    bool
	lines func() []string
}

// overlays are the screens over the slots, the first that is on shown: the SQL pane (v) covers
// the window but for the status line; the ? screen covers the panes, the status line stays
// (a question with it); the space-time diagram (t) stands in the place of the panes, between
// the header and the status line.
func (m Model) overlays() []overlay {
	l, s := m.layout, m.scene()
	return []overlay{
		{m.sql.Open, func() []string {
			lines := paneLines(m.sql.View(s), l.width, m.sql.BodyHeight()+1)
			lines = append(lines, m.statusLine().View(&m.styles, l.width, 1)...)
			return append(lines, m.sql.Hint(s))
		}},
		{m.showHelp, func() []string {
			lines := m.headerView()[:l.header]
			lines = append(lines, m.help().view(l.width, l.help)...)
			return append(lines, m.statusLine().View(&m.styles, l.width, l.status)...)
		}},
		{m.diagram.On, func() []string {
			lines := m.headerView()
			if m.diagram.H > 0 {
				d := strings.Split(m.diagram.View(s), "\n")
				// The history's timeline takes the diagram's last line when the diagram left it blank.
				if last, sl := len(d)-1, m.statusLine(); sl.Timeline != nil && strings.TrimSpace(ansi.Strip(d[last])) == "" {
					d[last] = common.Pad(m.styles.Subtle.Render(sl.Timeline(l.width)), l.width)
				}
				lines = append(lines, d...)
			}
			sl := m.statusLine()
			lines = append(lines, sl.View(&m.styles, l.width, l.diagramStatus(sl.NoteLines(l.width)))...)
			return append(lines, m.help().view(l.width, l.help)...)
		}},
	}
}

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

// headerView is the header's three lines (ui/header), from the frame and the lab's state.
func (m Model) headerView() []string {
	k := m.keys
	return header.Lines(header.Input{
		Scene: m.scene(), Width: m.layout.width, Target: m.target, Cycle: m.cycle, TempDB: m.cfg.TempDB,
		Keys:  header.Keys{NextScenario: k.NextScenario, Slower: k.Slower, Faster: k.Faster, Free: k.Free, Toggle: k.toggleKey},
		Steps: m.track.StepCount(), Free: m.free.on, FreePace: m.free.pace.Text(), FreeFailed: m.free.failed, FreeHeld: m.free.held,
		Playing: m.play.Playing, PlayRate: m.play.Rate(),
	})
}

// statusLine is the status line under the panes (ui/status) as the lab's state has it now: the
// note, an open question, the history's timeline (with the questions' score and the keys that
// move in it, which wait while a question is open) and whether the engine is busy.
func (m Model) statusLine() status.Line {
	l := status.Line{Note: m.status}
	if q := m.ask.Open; q != nil {
		l.Question = question.Note(q, m.keys.Answer.Keys())
	}
	if m.ask.Long {
		l.Limit = max(status.MaxLines, question.MaxLines) // a question and its answers, or the answer and its why
	}
	if line := m.track.Line; line.Lines() > 0 {
		keys := fmt.Sprintf("  %s back · %s marks", common.KeyName(m.keys.Back), common.KeyNames(m.keys.PrevMark, m.keys.NextMark))
		if m.ask.Open != nil {
			keys = "" // they wait for the answer: the timeline names no key that does not act now
		}
		score := m.ask.Score(line)
		l.Timeline = func(w int) string { return line.View(w, score, keys) }
	}
	switch {
	case m.busy && len(m.queue) > 0:
		l.Busy = fmt.Sprintf("working… %d waiting", len(m.queue))
	case m.busy && !m.free.polling: // a poll is the free run's heartbeat, not work to wait for
		l.Busy = "working…"
	}
	return l
}

// The row under the workers: the ledgers pane on the left, the checks pane on the right, each
// under its title, side by side at every width the lab lays out, so that a narrow screen keeps
// every check of the verdict on a line of its own.

// rowLines is the ledgers beside the checks, as the layout l sized them.
func rowLines(l layout, s common.Scene) []string {
	lw, cw := l.ledgersW, l.checksW()
	var left, right []string
	if l.rowTitle {
		left = append(left, s.Styles.Section.Render(common.Rule("Ledgers", lw)))
		right = append(right, checks.Pane{Scene: s}.Title(cw, l.wide))
	}
	left = append(left, ledgers.Pane{Scene: s}.Lines(lw, l.rowLines)...)
	right = append(right, checks.Pane{Scene: s}.Lines(cw, l.rowLines, l.wide)...)
	out := make([]string, 0, len(left))
	for i := range left {
		out = append(out, strings.TrimRight(common.Pad(left[i], lw)+"  "+right[i], " "))
	}
	return out
}
