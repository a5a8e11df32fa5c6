package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
	"leaselab/engine/words"
)

// eventsPane is the event log, drawn from the scene: the latest events in words, newest last,
// the ones the last command wrote marked •. It has no keys.
type eventsPane struct{ scene }

// eventsView is the event log in exactly h lines.
func (m eventsPane) eventsView(w, h int) []string {
	if h <= 0 {
		return nil
	}
	st, f := m.st, m.f
	title := "Events (newest last)"
	if f != nil {
		title = fmt.Sprintf("Events: %d so far, newest last", f.EventCount)
	}
	lines := []string{st.Section.Render(rule(title, w))}
	if f == nil {
		return box(lines, w, h)
	}
	// Newest last: fill the pane from the bottom up. A long event wraps onto a second line,
	// under its text, when there is room for it.
	idx := f.workerIndex()
	var body []string
	for i := len(f.Events) - 1; i >= 0 && len(body) < h-1; i-- {
		e := f.Events[i]
		text := eventLine(st, e, e.Seq > m.ch.newAfter, idx)
		ev := []string{text}
		if room := h - 1 - len(body); room >= 2 && width(text) > w {
			if parts := strings.SplitN(ansi.Wrap(text, w, ""), "\n", 2); len(parts) == 2 {
				ev = []string{parts[0], cut(spaces(eventIndent)+strings.ReplaceAll(parts[1], "\n", " "), w)}
			}
		}
		body = append(ev, body...)
	}
	return box(append(lines, body...), w, h)
}

// eventIndent is where an event's text starts: after the mark ("• ") and the time.
const eventIndent = 2 + len("09:00:00.000Z ")

// eventLine renders one event: its time, then its words with the worker's name in its colour.
func eventLine(st *Styles, e engine.Event, fresh bool, idx map[string]int) string {
	mark := "  "
	if fresh {
		mark = "• "
	}
	at := st.Subtle.Render(engine.FormatClock(e.At))
	// The words come from the engine's one renderer (engine.Sentence); what they are made of
	// (kind, outcome, subject) decides their style, never the words themselves. They may quote
	// a key or a LockedBy read from the database: escaped.
	text := words.Escape(e.Words())
	switch {
	case e.Kind == engine.EvPhase:
		return mark + at + " " + st.Section.Render("== "+text+" ==")
	case e.Kind == engine.EvNote:
		return mark + at + " " + st.Caption.Render(text)
	case e.Kind == engine.EvCrash:
		return mark + at + " " + st.Fail.Render(text)
	}
	switch e.Outcome {
	case engine.OutcomeBlocked, engine.OutcomeRejected, engine.OutcomeLost, engine.OutcomeLostRace:
		text = st.Warn.Render(text)
	case engine.OutcomeViolation:
		text = st.Duplicate.Render(text)
	case engine.OutcomeReclaimed:
		text = st.Playing.Render(text)
	default:
		if sub := e.Subject(); sub != "" {
			if wi, ok := idx[sub]; ok {
				text = st.worker(wi).Render(sub) + text[len(sub):]
			}
		}
	}
	return mark + at + " " + text
}

// captionLines is the scenario's explanation wrapped to w cells, under a title; none while it
// is hidden.
func (m Model) captionLines(w int) []string {
	if m.explain == explainOff || m.frame == nil {
		return nil
	}
	lines := []string{m.styles.Section.Render(rule("About this scenario ("+keyName(m.keys.Explain)+" hides)", w))}
	text := strings.Join(m.frame.Explain, " ")
	if text == "" {
		text = "This scenario has no explanation."
	}
	for _, l := range wrap(text, w) {
		lines = append(lines, m.styles.Caption.Render(l))
	}
	return append(lines, m.incidentLines(w)...)
}

// captionView is the explanation in exactly h lines.
func (m Model) captionView(w, h int) []string {
	if h <= 0 {
		return nil
	}
	return box(m.captionLines(w), w, h)
}

// maxStatusLines is how many lines a long status note may wrap onto (a toggle's note does).
const maxStatusLines = 6

// plain is the status note with its mark, unstyled: "! why nothing happened". The lab's status
// line and the watch's write it alike.
func (s status) plain() string {
	switch s.level {
	case levelWarn:
		return "! " + s.text
	case levelError:
		return "✗ " + s.text
	}
	return "› " + s.text
}

// statusLines is how many lines the status note takes at width w. A note that repeats the
// newest event, which the log on screen shows in full, keeps to one line.
func (m Model) statusLines(w int) int {
	return m.timelineLines() + m.noteLines(w)
}

// note is the status note as the screen shows it: while a question is open, a note about
// something else (a key that waits for the answer) comes with the question and its answers, so
// that no key takes them off the screen.
func (m Model) note() status {
	st := m.status
	if q := m.ask.open; q != nil {
		if ask := askNote(q, m.keys); !strings.Contains(st.text, ask) {
			st.text = strings.TrimSpace(st.text + "\n" + ask)
		}
	}
	return st
}

// noteLines is how many lines the status note itself takes at width w.
func (m Model) noteLines(w int) int {
	limit := maxStatusLines
	if m.ask.long {
		limit = max(limit, maxAskLines) // a question and its answers, or the answer and its why (ask.go)
	}
	return max(1, min(limit, len(wrap(m.note().plain(), w))))
}

// statusView is the status line(s): what the last command did, or why nothing happened, and
// whether the engine is busy. Exactly h lines.
func (m Model) statusView(w, h int) []string {
	st := &m.styles
	note := m.note()
	style := st.Info
	switch note.level {
	case levelWarn:
		style = st.Warn
	case levelError:
		style = st.Error
	}
	tl := m.timelineLines() // the history's timeline comes first (history_view.go)
	if h-tl < m.noteLines(w) {
		tl = 0 // the note first: at 80×24 it is where the room reads the newest event
	}
	h -= tl
	lines := wrap(note.plain(), w)
	if len(lines) > h {
		lines = append(lines[:h-1], cut(strings.Join(lines[h-1:], " "), w))
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
	if last := len(lines) - 1; right != "" && width(lines[last])+1+len(right) <= w {
		lines[last] = pad(lines[last], w-len(right)-1) + " " + st.Subtle.Render(right)
	}
	if tl > 0 {
		return append([]string{pad(st.Subtle.Render(m.timelineView(w)), w)}, box(lines, w, h)...)
	}
	return box(lines, w, h)
}
