package words

import (
	"fmt"
	"io"
	"strings"

	"leaselab/engine"
)

// WriteIncident writes a lesson's incident card as text, above run's report: a heading, then
// each line of the card wrapped to 100 columns under its label. Nothing for a lesson without one.
func WriteIncident(out io.Writer, inc *engine.Incident) error {
	if inc == nil {
		return nil
	}
	var b strings.Builder
	b.WriteString("INCIDENT: the real bug this lesson replays\n")
	for _, l := range inc.Lines() {
		for i, w := range wrapWords(l, 92) {
			if i == 0 {
				fmt.Fprintf(&b, "  %s\n", w)
			} else {
				fmt.Fprintf(&b, "      %s\n", w)
			}
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(out, b.String())
	return err
}

// mdIncident is the transcript's section of the card.
func mdIncident(b *strings.Builder, inc *engine.Incident) {
	if inc == nil {
		return
	}
	b.WriteString("## Incident\n\n")
	for _, l := range inc.Lines() {
		label, text, _ := strings.Cut(l, ": ")
		fmt.Fprintf(b, "- **%s:** %s\n", md(label), md(text))
	}
	b.WriteString("\n")
}

// wrapWords cuts s into lines of at most w runes, at spaces (a longer word stands alone).
func wrapWords(s string, w int) []string {
	var lines []string
	cur := ""
	for _, f := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = f
		case len([]rune(cur))+1+len([]rune(f)) <= w:
			cur += " " + f
		default:
			lines = append(lines, cur)
			cur = f
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}
