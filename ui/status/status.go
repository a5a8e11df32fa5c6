// Package status is the lab's status line under the panes: what the last command did, or why
// nothing happened, and whether the engine is busy; an open question with its answers; and,
// once the run has a history, the history's timeline above it (ui/history).
package status

import (
	"strings"

	"leaselab/ui/common"
)

// MaxLines is how many lines a long status note may wrap onto (a toggle's note does).
const MaxLines = 6

// Line is the status line as the shell's state has it now.
type Line struct {
	Note     common.Status
	Question string             // the open question with its answers on their keys; "" when none
	Limit    int                // the most lines the note may take (0: MaxLines)
	Timeline func(w int) string // the history's timeline at width w; nil while there is none
	Busy     string             // "working…", "working… 2 waiting"; "" when the engine is idle
}

// Shown is the note as the screen shows it: while a question is open, a note about something
// else (a key that waits for the answer) comes with the question and its answers, so that no
// key takes them off the screen.
func (l Line) Shown() common.Status {
	st := l.Note
	if l.Question != "" && !strings.Contains(st.Text, l.Question) {
		st.Text = strings.TrimSpace(st.Text + "\n" + l.Question)
	}
	return st
}

// NoteLines is how many lines the note itself takes at width w.
func (l Line) NoteLines(w int) int {
	limit := MaxLines
	if l.Limit > 0 {
		limit = l.Limit
	}
	return max(1, min(limit, len(common.Wrap(l.Shown().Plain(), w))))
}

// timelineLines is how many lines the timeline takes: 1 when there is one.
func (l Line) timelineLines() int {
	if l.Timeline != nil {
		return 1
	}
	return 0
}

// Lines is how many lines the status line takes at width w: the timeline and the note.
func (l Line) Lines(w int) int { return l.timelineLines() + l.NoteLines(w) }

// View is the status line in exactly h lines of at most w cells. When h has no room for the
// timeline as well as the note, the note comes first: at 80×24 it is where the room reads the
// newest event.
func (l Line) View(st *common.Styles, w, h int) []string {
	note := l.Shown()
	style := st.Info
	switch note.Level {
	case common.LevelWarn:
		style = st.Warn
	case common.LevelError:
		style = st.Error
	}
	tl := l.timelineLines()
	if h-tl < l.NoteLines(w) {
		tl = 0
	}
	h -= tl
	lines := common.Wrap(note.Plain(), w)
	if len(lines) > h {
		lines = append(lines[:h-1], common.Cut(strings.Join(lines[h-1:], " "), w))
	}
	for i := range lines {
		lines[i] = style.Render(lines[i])
	}
	if last := len(lines) - 1; l.Busy != "" && common.Width(lines[last])+1+len(l.Busy) <= w {
		lines[last] = common.Pad(lines[last], w-len(l.Busy)-1) + " " + st.Subtle.Render(l.Busy)
	}
	if tl > 0 {
		return append([]string{common.Pad(st.Subtle.Render(l.Timeline(w)), w)}, common.Box(lines, w, h)...)
	}
	return common.Box(lines, w, h)
}
