// Package events is the event log pane: the latest events in words, newest last.
package events

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"leaselab/ui/common"
)

// Pane is the event log, drawn from the scene: the latest events in words, newest last,
// the ones the last command wrote marked •. It has no keys.
type Pane struct{ common.Scene }

// Lines is the event log in exactly h lines.
func (m Pane) Lines(w, h int) []string {
	if h <= 0 {
		return nil
	}
	st, f := m.Styles, m.Frame
	title := "Events (newest last)"
	if f != nil {
		title = fmt.Sprintf("Events: %d so far, newest last", f.EventCount)
	}
	lines := []string{st.Section.Render(common.Rule(title, w))}
	if f == nil {
		return common.Box(lines, w, h)
	}
	// Newest last: fill the pane from the bottom up. A long event wraps onto a second line,
	// under its text, when there is room for it.
	idx := f.WorkerIndex()
	var body []string
	for i := len(f.Events) - 1; i >= 0 && len(body) < h-1; i-- {
		e := f.Events[i]
		text := common.EventLine(st, e, e.Seq > m.Changes.NewAfter, idx)
		ev := []string{text}
		if room := h - 1 - len(body); room >= 2 && common.Width(text) > w {
			if parts := strings.SplitN(ansi.Wrap(text, w, ""), "\n", 2); len(parts) == 2 {
				ev = []string{parts[0], common.Cut(common.Spaces(common.EventIndent)+strings.ReplaceAll(parts[1], "\n", " "), w)}
			}
		}
		body = append(ev, body...)
	}
	return common.Box(append(lines, body...), w, h)
}
