package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The row under the workers: the ledgers on the left, the safety checks on the right, each
// under its title, side by side at every width the lab lays out, so that a narrow screen keeps
// every check of the verdict on a line of its own.

// ledgerGroups is the run's ledgers on lines of at most w cells, the most telling first: short
// items share a line, a long one breaks at its " · " onto lines of its own. Each group is the
// lines of one screen line's items, kept or left out whole.
func (m Model) ledgerGroups(w int) [][]string {
	var groups [][]string
	line := ""
	flush := func() {
		if line != "" {
			groups = append(groups, []string{line})
			line = ""
		}
	}
	for _, it := range m.ledgerItems() {
		switch {
		case width(it) > w:
			flush()
			g := wrapHanging(it, w, 2)
			if segs := strings.Split(it, " · "); len(segs) > 1 {
				g = flowWrap(segs, " · ", w-2)
				for i := 1; i < len(g); i++ {
					g[i] = "  " + g[i]
				}
			}
			groups = append(groups, g)
		case line == "":
			line = it
		case width(line)+3+width(it) <= w:
			line += " · " + it
		default:
			flush()
			line = it
		}
	}
	flush()
	return groups
}

// ledgerBody is every line of the ledgers at width w.
func (m Model) ledgerBody(w int) []string {
	var lines []string
	for _, g := range m.ledgerGroups(w) {
		lines = append(lines, g...)
	}
	return lines
}

// ledgersBox is the ledgers in exactly h lines: the items that fit whole, in their order.
func (m Model) ledgersBox(w, h int) []string {
	var lines []string
	for _, g := range m.ledgerGroups(w) {
		if len(lines)+len(g) > h {
			continue // an item too tall for the lines left gives way to shorter ones after it
		}
		lines = append(lines, g...)
	}
	return box(lines, w, h)
}

// rowView is the ledgers beside the checks, as the layout sized them.
func (m Model) rowView() []string {
	l := m.layout
	lw, cw := l.ledgersW, l.checksW()
	var left, right []string
	if l.rowTitle {
		left = append(left, m.styles.Section.Render(rule("Ledgers", lw)))
		right = append(right, m.checksTitle(cw, l.wide))
	}
	left = append(left, m.ledgersBox(lw, l.rowLines)...)
	right = append(right, m.checksView(cw, l.rowLines, l.wide)...)
	out := make([]string, 0, len(left))
	for i := range left {
		out = append(out, strings.TrimRight(pad(left[i], lw)+"  "+right[i], " "))
	}
	return out
}

// verdictLines is the verdict (once the scenario is done) or what the scenario expects, wrapped
// to w cells rather than cut.
func (m Model) verdictLines(w int) []string {
	if m.frame == nil {
		return nil
	}
	var lines []string
	for _, line := range m.verdictView(1<<12, 4) {
		if line == "" {
			continue
		}
		if width(line) > w {
			// The banner says PASS or FAIL: its closing ✅ or ❌ is the first thing to go.
			for _, mark := range []string{" ✅", " ❌"} {
				if plain := ansi.Strip(line); strings.HasSuffix(plain, mark) && width(plain)-width(mark) <= w {
					line = ansi.Cut(line, 0, width(plain)-width(mark))
				}
			}
		}
		lines = append(lines, line)
	}
	return wrapAll(lines, w)
}
