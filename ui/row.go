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
