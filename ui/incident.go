package ui

import (
	"leaselab/engine"
	"leaselab/ui/common"
)

// The incident card (issue 32): a lesson that replays a real queue's bug shows its card under
// the explanation once i asks for it (explainOn), never in the automatic explanation, so that
// the screen's first look stays the lesson's.

// incidentLines is the card wrapped to w cells, under a title; none unless the explanation was
// asked for and the lesson has a card.
func (m Model) incidentLines(w int) []string {
	if m.explain != explainOn || m.frame == nil || m.frame.Incident == nil {
		return nil
	}
	return incidentCard(m.frame.Incident, m.styles, w)
}

// incidentCard is inc's lines under a rule, wrapped to w cells.
func incidentCard(inc *engine.Incident, st common.Styles, w int) []string {
	lines := []string{st.Section.Render(common.Rule("Incident: the real bug this lesson replays", w))}
	for _, l := range inc.Lines() {
		for _, c := range common.Wrap(l, w) {
			lines = append(lines, st.Caption.Render(c))
		}
	}
	return lines
}

// explainNext is the explanation's mode after i: on a lesson with an incident card, an
// explanation shown by itself (auto) is asked for, so that the card joins it; otherwise i
// shows or hides it.
func (m Model) explainNext() explainMode {
	visible := m.layout.caption > 0
	if visible && m.explain == explainAuto && m.frame != nil && m.frame.Incident != nil {
		return explainOn
	}
	return m.explain.toggle(visible)
}
