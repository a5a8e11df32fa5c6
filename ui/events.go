package ui

import (
	"fmt"
	"strings"

	"leaselab/engine"
)

// renewLost is the outcome of a heartbeat that found its lease gone (the engine has no
// constant for it yet).
const renewLost = "lost"

// eventsView is the event log: the latest events in words, newest last, the ones the last
// command wrote marked •. Exactly h lines.
func (m Model) eventsView(w, h int) []string {
	if h <= 0 {
		return nil
	}
	st, f := &m.styles, m.frame
	title := "Events (newest last)"
	if f != nil {
		title = fmt.Sprintf("Events: %d so far, newest last", f.EventCount)
	}
	lines := []string{st.Section.Render(rule(title, w))}
	if f == nil {
		return box(lines, w, h)
	}
	show := h - 1
	evs := f.Events[max(0, len(f.Events)-show):]
	idx := f.workerIndex()
	for _, e := range evs {
		lines = append(lines, m.eventLine(e, e.Seq > m.changes.newAfter, idx))
	}
	return box(lines, w, h)
}

// eventLine renders one event: its time, then its words with the worker's name in its colour.
func (m Model) eventLine(e engine.Event, fresh bool, idx map[string]int) string {
	st := &m.styles
	mark := "  "
	if fresh {
		mark = "• "
	}
	at := st.Subtle.Render(engine.FormatClock(e.At))
	text := e.Text
	switch {
	case e.Kind == engine.EvPhase:
		return mark + at + " " + st.Section.Render("== "+text+" ==")
	case e.Kind == engine.EvNote:
		return mark + at + " " + st.Caption.Render(text)
	case e.Kind == engine.EvCrash:
		return mark + at + " " + st.Fail.Render(text)
	}
	switch e.Outcome {
	case engine.OutcomeBlocked, engine.OutcomeRejected, renewLost:
		text = st.Warn.Render(text)
	case engine.OutcomeViolation:
		text = st.Duplicate.Render(text)
	case engine.OutcomeReclaimed:
		text = st.Playing.Render(text)
	default:
		if wi, ok := idx[e.Worker]; ok && e.Worker != "" && strings.HasPrefix(text, e.Worker) {
			text = st.worker(wi).Render(e.Worker) + text[len(e.Worker):]
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
	lines := []string{m.styles.Section.Render(rule("About this scenario (i hides)", w))}
	text := strings.Join(m.frame.Explain, " ")
	if text == "" {
		text = "This scenario has no explanation."
	}
	for _, l := range wrap(text, w) {
		lines = append(lines, m.styles.Caption.Render(l))
	}
	return lines
}

// captionView is the explanation in exactly h lines.
func (m Model) captionView(w, h int) []string {
	if h <= 0 {
		return nil
	}
	return box(m.captionLines(w), w, h)
}

// statusView is the status line: what the last command did, or why nothing happened, and
// whether the engine is busy.
func (m Model) statusView(w int) string {
	st := &m.styles
	var text string
	switch m.status.level {
	case levelWarn:
		text = st.Warn.Render("! " + m.status.text)
	case levelError:
		text = st.Error.Render("✗ " + m.status.text)
	default:
		text = "› " + m.status.text
	}
	right := ""
	switch {
	case m.busy && len(m.queue) > 0:
		right = fmt.Sprintf("working… %d waiting", len(m.queue))
	case m.busy && !m.free.polling: // a poll is the free run's heartbeat, not work to wait for
		right = "working…"
	}
	if right == "" {
		return cut(text, w)
	}
	return pad(text, max(0, w-len(right)-1)) + " " + st.Subtle.Render(right)
}

// helpView is the footer: the short help, or every key after ?.
func (m Model) helpView(h int) []string {
	if h <= 0 {
		return nil
	}
	if m.showHelp {
		return box(strings.Split(m.help.FullHelpView(m.keys.FullHelp()), "\n"), m.layout.width, h)
	}
	return box([]string{m.help.ShortHelpView(m.keys.ShortHelp())}, m.layout.width, h)
}
