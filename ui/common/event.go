package common

import (
	"leaselab/engine"
	"leaselab/engine/words"
)

// EventIndent is where an event's text starts: after the mark ("• ") and the time.
const EventIndent = 2 + len("09:00:00.000Z ")

// EventLine renders one event: its time, then its words with the worker's name in its colour.
func EventLine(st *Styles, e engine.Event, fresh bool, idx map[string]int) string {
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
				text = st.Worker(wi).Render(sub) + text[len(sub):]
			}
		}
	}
	return mark + at + " " + text
}
