package ui

import (
	"fmt"
	"strings"

	"leaselab/ui/common"
	"leaselab/ui/question"
)

// The status line under the panes.

// maxStatusLines is how many lines a long status note may wrap onto (a toggle's note does).
const maxStatusLines = 6

// statusLines is how many lines the status note takes at width w. A note that repeats the
// newest event, which the log on screen shows in full, keeps to one line.
func (m Model) statusLines(w int) int {
	return m.track.Line.Lines() + m.noteLines(w)
}

// note is the status note as the screen shows it: while a question is open, a note about
// something else (a key that waits for the answer) comes with the question and its answers, so
// that no key takes them off the screen.
func (m Model) note() common.Status {
	st := m.status
	if q := m.ask.Open; q != nil {
		if ask := question.Note(q, m.keys.Answer.Keys()); !strings.Contains(st.Text, ask) {
			st.Text = strings.TrimSpace(st.Text + "\n" + ask)
		}
	}
	return st
}

// noteLines is how many lines the status note itself takes at width w.
func (m Model) noteLines(w int) int {
	limit := maxStatusLines
	if m.ask.Long {
		limit = max(limit, question.MaxLines) // a question and its answers, or the answer and its why
	}
	return max(1, min(limit, len(common.Wrap(m.note().Plain(), w))))
}

// statusView is the status line(s): what the last command did, or why nothing happened, and
// whether the engine is busy. Exactly h lines.
func (m Model) statusView(w, h int) []string {
	st := &m.styles
	note := m.note()
	style := st.Info
	switch note.Level {
	case common.LevelWarn:
		style = st.Warn
	case common.LevelError:
		style = st.Error
	}
	tl := m.track.Line.Lines() // the history's timeline comes first (history_view.go)
	if h-tl < m.noteLines(w) {
		tl = 0 // the note first: at 80×24 it is where the room reads the newest event
	}
	h -= tl
	lines := common.Wrap(note.Plain(), w)
	if len(lines) > h {
		lines = append(lines[:h-1], common.Cut(strings.Join(lines[h-1:], " "), w))
	}
	for i := range lines {
		lines[i] = style.Render(lines[i])
	}
	right := ""
	switch {
	case m.busy && len(m.queue) > 0:
		right = fmt.Sprintf("working… %d waiting", len(m.queue))
	case m.busy && !m.free.polling: // a poll is the free run's heartbeat, not work to wait for
		right = "working…"
	}
	if last := len(lines) - 1; right != "" && common.Width(lines[last])+1+len(right) <= w {
		lines[last] = common.Pad(lines[last], w-len(right)-1) + " " + st.Subtle.Render(right)
	}
	if tl > 0 {
		return append([]string{common.Pad(st.Subtle.Render(m.timelineView(w)), w)}, common.Box(lines, w, h)...)
	}
	return common.Box(lines, w, h)
}
