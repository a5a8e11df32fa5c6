package ui

import (
	"fmt"
	"strings"

	"leaselab/ui/common"
)

// The timeline is one line above the status note, once the run has a history: where the
// database stands among the recorded moves, one glyph a move, and what the glyphs mean.

// markWords are the timeline's glyphs in words, in the order the legend gives them.
var markWords = []struct {
	mark rune
	word string
}{{'x', "crash"}, {'r', "reclaim"}, {'!', "rejected finalize"}, {'*', "ownership violation"}, {'~', "ran free (no going back past it)"}}

// timelineLines is how many lines the timeline takes: 1 once something was recorded.
func (m Model) timelineLines() int {
	if m.line.valid && len(m.line.entries) > 0 {
		return 1
	}
	return 0
}

// timelineView is the timeline in at most w cells: "history step 7 of 12 ··x··r·|··!·· …".
func (m Model) timelineView(w int) string {
	t := m.line
	head := fmt.Sprintf("history step %d of %d ", t.pos, len(t.entries))
	if t.pos < len(t.entries) {
		head = fmt.Sprintf("history step %d of %d (in the past) ", t.pos, len(t.entries))
	}
	if sc := m.ask.score(m.line); sc != "" {
		head += "· " + sc + " "
	}
	glyphs := make([]rune, 0, len(t.entries)+1)
	seen := map[rune]bool{}
	for i, e := range t.entries {
		if i == t.pos {
			glyphs = append(glyphs, '|')
		}
		glyphs = append(glyphs, e.Mark)
		seen[e.Mark] = true
	}
	if t.pos == len(t.entries) {
		glyphs = append(glyphs, '|')
	}
	var legend []string
	for _, mw := range markWords {
		if seen[mw.mark] {
			legend = append(legend, string(mw.mark)+" "+mw.word)
		}
	}
	keys := fmt.Sprintf("  %s back · %s marks", common.KeyName(m.keys.Back), common.KeyNames(m.keys.PrevMark, m.keys.NextMark))
	if m.ask.open != nil {
		keys = "" // they wait for the answer: the timeline names no key that does not act now
	}
	tail := keys
	if len(legend) > 0 {
		tail = "  " + strings.Join(legend, " · ") + keys
	}
	room := w - common.Width(head) - common.Width(tail)
	if room < 12 {
		tail, room = keys, w-common.Width(head)-common.Width(keys)
	}
	strip := window(glyphs, t.pos, max(room, 8))
	return common.Cut(head+strip+tail, w)
}

// window is up to n glyphs of g around index at (the cursor), with … where it cuts.
func window(g []rune, at, n int) string {
	if len(g) <= n {
		return string(g)
	}
	lo := max(0, min(at-n/2, len(g)-n))
	hi := lo + n
	s := []rune(string(g[lo:hi]))
	if lo > 0 {
		s[0] = '…'
	}
	if hi < len(g) {
		s[len(s)-1] = '…'
	}
	return string(s)
}
