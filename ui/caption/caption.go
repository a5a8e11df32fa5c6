// Package caption is the scenario's explanation under the panes (i): shown on its own when the
// screen has lines to spare, or when asked for; on a lesson that replays a real queue's bug
// (issue 32), the incident card joins it once i asks for it, never in the automatic
// explanation, so that the screen's first look stays the lesson's.
package caption

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Mode says whether the scenario's explanation is shown.
type Mode int

// Explanation modes. It starts in Auto: shown when the screen has lines to spare.
const (
	Auto Mode = iota
	On
	Off
)

// Pane is the explanation: its mode, and the key that shows and hides it (its title names it).
type Pane struct {
	Mode Mode
	key  key.Binding
}

// New is the explanation in Auto, shown and hidden by k.
func New(k key.Binding) Pane { return Pane{key: k} }

// Next is the explanation after its key, given whether it is on screen now: on a lesson with
// an incident card, an explanation shown by itself (Auto) is asked for, so that the card joins
// it; otherwise the key shows or hides it.
func (p Pane) Next(s common.Scene, visible bool) Pane {
	switch {
	case visible && p.Mode == Auto && s.Frame != nil && s.Frame.Incident != nil:
		p.Mode = On
	case visible:
		p.Mode = Off
	default:
		p.Mode = On
	}
	return p
}

// Lines is the scenario's explanation wrapped to w cells, under a title; none while it is
// hidden.
func (p Pane) Lines(s common.Scene, w int) []string {
	if p.Mode == Off || s.Frame == nil {
		return nil
	}
	st := s.Styles
	lines := []string{st.Section.Render(common.Rule("About this scenario ("+common.KeyName(p.key)+" hides)", w))}
	text := strings.Join(s.Frame.Explain, " ")
	if text == "" {
		text = "This scenario has no explanation."
	}
	for _, l := range common.Wrap(text, w) {
		lines = append(lines, st.Caption.Render(l))
	}
	if p.Mode == On && s.Frame.Incident != nil {
		lines = append(lines, IncidentCard(s.Frame.Incident, *st, w)...)
	}
	return lines
}

// View is the explanation in exactly h lines. When it has more (an incident card at 80×24),
// its last line says how many are left out and where they are whole.
func (p Pane) View(s common.Scene, w, h int) []string {
	if h <= 0 {
		return nil
	}
	lines := p.Lines(s, w)
	if n := len(lines) - h + 1; n > 1 && h >= 2 {
		where := "a taller window shows them"
		if s.Frame != nil && s.Frame.Incident != nil {
			where += "; leaselab run prints the card whole"
		}
		lines = append(lines[:h-1:h-1], s.Styles.Subtle.Render(fmt.Sprintf("+%d more %s: %s", n, common.Plural(n, "line"), where)))
	}
	return common.Box(lines, w, h)
}

// IncidentCard is inc's lines under a rule, wrapped to w cells.
func IncidentCard(inc *engine.Incident, st common.Styles, w int) []string {
	lines := []string{st.Section.Render(common.Rule("Incident: the real bug this lesson replays", w))}
	for _, l := range inc.Lines() {
		for _, c := range common.Wrap(l, w) {
			lines = append(lines, st.Caption.Render(c))
		}
	}
	return lines
}
