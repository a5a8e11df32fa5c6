package ui

import (
	"io"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"leaselab/engine"
	"leaselab/ui/common"
)

// viewBudget is what one screen may cost to render: the 2 ms.
const viewBudget = 2 * time.Millisecond

// BenchmarkView renders the lab for 1,000 messages and 8 workers at 120×40, in true colour, in
// the middle of a run (leases live, a worker crashed, events in the log).
func BenchmarkView(b *testing.B) {
	for _, size := range []struct {
		name string
		w, h int
	}{{"120x40", 120, 40}, {"80x24", 80, 24}} {
		b.Run(size.name, func(b *testing.B) {
			l := newLab(b, "playground", size.w, size.h, engine.Overrides{Messages: 1000, Workers: 8})
			r := lipgloss.NewRenderer(io.Discard)
			r.SetColorProfile(termenv.TrueColor)
			l.m.styles = common.DefaultStyles(r)
			for i := 0; i < 24; i++ {
				l.press("n")
			}
			l.press("x", "+")
			if len(l.m.frame.Rows) != 1000 || len(l.m.frame.Workers) != 8 {
				b.Fatalf("%d rows, %d workers", len(l.m.frame.Rows), len(l.m.frame.Workers))
			}
			m := l.m
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_ = m.View()
			}
			b.StopTimer()
			if per := b.Elapsed() / time.Duration(b.N); b.N > 10 && per > viewBudget && !raceEnabled {
				b.Errorf("View takes %s, over the %s budget", per, viewBudget)
			}
		})
	}
}

// BenchmarkStep is one step as the lab performs it: the action, then the frame read back from
// the database (snapshot, ledgers, summary) for 1,000 messages and 8 workers.
func BenchmarkStep(b *testing.B) {
	l := newLab(b, "playground", 120, 40, engine.Overrides{Messages: 1000, Workers: 8})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		l.press("n")
	}
}
