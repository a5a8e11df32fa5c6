package ui

import (
	"strings"

	"leaselab/ui/checks"
	"leaselab/ui/common"
	"leaselab/ui/ledgers"
)

// The row under the workers: the ledgers pane on the left, the checks pane on the right, each
// under its title, side by side at every width the lab lays out, so that a narrow screen keeps
// every check of the verdict on a line of its own.

// rowView is the ledgers beside the checks, as the layout sized them.
func (m Model) rowView() []string {
	l := m.layout
	lw, cw := l.ledgersW, l.checksW()
	var left, right []string
	if l.rowTitle {
		left = append(left, m.styles.Section.Render(common.Rule("Ledgers", lw)))
		right = append(right, checks.Pane{Scene: m.scene()}.Title(cw, l.wide))
	}
	left = append(left, ledgers.Pane{Scene: m.scene()}.Lines(lw, l.rowLines)...)
	right = append(right, checks.Pane{Scene: m.scene()}.Lines(cw, l.rowLines, l.wide)...)
	out := make([]string, 0, len(left))
	for i := range left {
		out = append(out, strings.TrimRight(common.Pad(left[i], lw)+"  "+right[i], " "))
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
		if line != "" {
			lines = append(lines, line) // whole: a banner too wide wraps, its ✅ or ❌ with it
		}
	}
	lines = common.WrapAll(lines, w)
	for i, line := range lines {
		lines[i] = strings.ReplaceAll(line, "\u00a0", " ") // the mark's glue has done its work
	}
	return lines
}
