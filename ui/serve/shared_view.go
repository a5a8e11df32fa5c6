package serve

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
	"leaselab/engine/room"
	"leaselab/engine/words"
	"leaselab/ui/common"
)

// What every screen of the shared room draws from a frame: the settings, the outbox table, the
// attendees, the room's ledgers, the question and the scoreboard. Every word that comes from
// the database or an attendee is escaped (words.Escape is a no-op on words already escaped),
// and every state has a word or a glyph as well as a style (NO_COLOR removes both).

// roomStyles are a screen's styles, from its own renderer.
type roomStyles struct {
	bold, faint, mine, warn, good lipgloss.Style
}

// In the projector theme (common.ThemeProjector) nothing is faint and no text is coloured on
// the terminal's own background: a warning is a badge (black on amber), a good state bold.
func newRoomStyles(r *lipgloss.Renderer, theme string) roomStyles {
	if theme == common.ThemeProjector {
		bold := r.NewStyle().Bold(true)
		return roomStyles{bold: bold, faint: r.NewStyle(), mine: bold.Reverse(true),
			warn: bold.Foreground(lipgloss.Color("16")).Background(lipgloss.Color("214")), good: bold}
	}
	return roomStyles{bold: r.NewStyle().Bold(true), faint: r.NewStyle().Faint(true),
		mine: r.NewStyle().Bold(true).Reverse(true), warn: r.NewStyle().Foreground(lipgloss.Color("3")),
		good: r.NewStyle().Foreground(lipgloss.Color("2"))}
}

// settingsLine names the toggles for the room, the lease and the clock.
func settingsLine(f *room.Frame) string {
	var parts []string
	for _, t := range roomToggles(f.RowLocks) {
		v := "off"
		if t.Of(f.Settings) {
			v = "ON"
		}
		parts = append(parts, t.Words+" "+v)
	}
	return fmt.Sprintf("%s · lease %s · clock %s", strings.Join(parts, " · "), f.Settings.Lease, engine.FormatClock(f.Now))
}

// rowHeader and rowLine lay out the outbox table.
func rowHeader() string {
	return fmt.Sprintf("  %4s %-10s %-10s %-16s %-20s %3s", "ID", "KEY", "STATUS", "LOCKED BY", "LOCKED UNTIL", "V")
}

func rowLine(f *room.Frame, r engine.Row, me string, st roomStyles) string {
	until := ""
	if !r.LockedUntil.IsZero() {
		until = engine.FormatClock(r.LockedUntil)
		if r.Status == engine.StatusProcessing && r.LockedUntil.Before(f.Now) {
			until += " ENDED"
		}
	}
	owner := words.Escape(r.LockedBy)
	mark := " "
	if me != "" && owner == me {
		mark = "▶"
	}
	line := fmt.Sprintf("%s %4d %-10.10s %-10.10s %-16.16s %-20s %3d", mark, r.ID, words.Escape(r.IdempotencyKey), r.Status, owner, until, r.LeaseVersion)
	switch {
	case mark == "▶":
		return st.mine.Render(line)
	case r.Status == engine.StatusProcessing:
		return st.warn.Render(line)
	}
	return line
}

// rowLines are the table: its header and n rows from the first, scrolled by from (clamped).
func rowLines(f *room.Frame, me string, from, n int, st roomStyles) []string {
	lines := []string{st.bold.Render(rowHeader())}
	if n < 1 {
		return lines
	}
	from = max(0, min(from, len(f.Rows)-n))
	for i := from; i < len(f.Rows) && i < from+n; i++ {
		lines = append(lines, rowLine(f, f.Rows[i], me, st))
	}
	if rest := len(f.Rows) - from - n; rest > 0 || from > 0 {
		lines = append(lines, st.faint.Render(fmt.Sprintf("  rows %d–%d of %d (↑↓ scroll) · Pending %d · Processing %d · Processed %d",
			from+1, min(len(f.Rows), from+n), len(f.Rows), f.Counts.Pending, f.Counts.Processing, f.Counts.Processed)))
	}
	return lines
}

// seatState is an attendee's worker in a few words.
func seatState(s room.SeatView) string {
	switch {
	case !s.Present:
		what := "AWAY (" + string(s.Away) + "): CRASHED to the room"
		if s.Frozen && s.Holding != "" {
			what += fmt.Sprintf(", holding %s v%d", s.Holding, s.Version)
		}
		return what
	case s.Crashed:
		return "CRASHED (the teacher): space restarts it"
	}
	state := s.State
	if s.Holding != "" {
		state += fmt.Sprintf(" (v%d)", s.Version)
	}
	return state
}

// seatHeader and seatLine lay out the attendees.
func seatHeader() string {
	return fmt.Sprintf("  %-16s %-7s %-44s %6s %5s %6s %5s  %s", "WHO", "WORKER", "STATE", "CLAIMS", "CALLS", "FINAL", "REFUS", "PROCESSED")
}

func seatLine(s room.SeatView, mark string, st roomStyles) string {
	line := fmt.Sprintf("%s %-16s %-7.7s %-44.44s %6d %5d %6d %5d  %s", mark, s.Name, s.Worker, seatState(s), s.Claims, s.Processed,
		s.Finalized, s.Refused, strings.Join(s.Keys, " "))
	if s.StaleWorker != "" {
		line += fmt.Sprintf("  [old %s: %s]", s.StaleWorker, s.StaleState)
	}
	if !s.Present || s.Crashed {
		return st.faint.Render(line)
	}
	return line
}

// seatLines are the attendees, at most n lines with the header; me's line (or the chosen one,
// sel) is always among them.
func seatLines(f *room.Frame, me string, sel, n int, st roomStyles) []string {
	lines := []string{st.bold.Render(seatHeader())}
	if n < 2 {
		return lines
	}
	keep := n - 1
	show := make([]bool, len(f.Seats))
	for i, s := range f.Seats {
		if s.Name == me || i == sel {
			show[i] = true
			keep--
		}
	}
	for i := range f.Seats {
		if keep > 0 && !show[i] && (len(f.Seats) <= n-1 || i < n-2) {
			show[i] = true
			keep--
		}
	}
	hidden := 0
	for i, s := range f.Seats {
		if !show[i] {
			hidden++
			continue
		}
		mark := " "
		if s.Name == me || i == sel {
			mark = "▶"
		}
		line := seatLine(s, mark, st)
		if mark == "▶" {
			line = st.mine.Render(ansi.Strip(line))
		}
		lines = append(lines, line)
	}
	if hidden > 0 {
		lines = append(lines, st.faint.Render(fmt.Sprintf("  … and %d more attendees", hidden)))
	}
	return lines
}

// ledgerLine counts the room's ledgers.
func ledgerLine(f *room.Frame) string {
	here := 0
	for _, s := range f.Seats {
		if s.Present {
			here++
		}
	}
	l := f.Ledger
	return fmt.Sprintf("ROOM  %d of %d attendees here · provider calls %d · duplicates %d · processed again after a reclaim %d · reclaims %d · refused finalizes %d · ownership violations %d",
		here, len(f.Seats), f.ProviderCalls, len(l.Duplicates), len(l.Again), l.NReclaims, l.NRefused, l.NViolations)
}

// boardLines are the scoreboard: the headline, and with full every line, the checks and the
// verdict.
func boardLines(f *room.Frame, full bool, st roomStyles) []string {
	b := f.Board
	lines := []string{st.bold.Render("SO FAR: ") + b.Headline}
	if f.Ended {
		lines[0] = st.bold.Render("SCOREBOARD: ") + b.Headline
	}
	if !full {
		return lines
	}
	for _, l := range b.Lines {
		lines = append(lines, "  · "+l)
	}
	for _, c := range b.Checks {
		if c.State == "aside" {
			continue
		}
		line := fmt.Sprintf("  %-5s %s", c.State, c.Name)
		if c.State == "FAILS" {
			line = st.warn.Render(line + ": " + c.Detail)
		}
		lines = append(lines, line)
	}
	if b.Verdict != "" {
		v := "VERDICT: " + b.Verdict
		if b.Passed {
			lines = append(lines, st.good.Render(v))
		} else {
			lines = append(lines, st.warn.Render(v))
		}
	}
	return lines
}

// histogram draws a question's answers as bars, w cells wide at most.
func histogram(q *room.QuestionView, w int, st roomStyles) []string {
	most := 1
	for _, c := range q.Counts {
		most = max(most, c)
	}
	bar := max(5, min(40, w-50))
	var lines []string
	for i, a := range q.Answers {
		n := q.Counts[i] * bar / most
		mark := " "
		if i == q.Right {
			mark = "✓"
		}
		lines = append(lines, fmt.Sprintf("  %s %d) %-30.30s %3d %s", mark, i+1, a, q.Counts[i], strings.Repeat("█", n)))
	}
	return lines
}

// fit joins lines into a screen of w×h cells at most: each line cut at w, the lines past h
// dropped.
func fit(lines []string, w, h int) string {
	if len(lines) > h {
		lines = lines[:max(h, 0)]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "…")
	}
	return strings.Join(lines, "\n")
}

// screenSize is a window's size, with the defaults of a screen without a pty's size.
func screenSize(w, h int) (int, int) {
	if w <= 0 {
		w = 120
	}
	if h <= 0 {
		h = 40
	}
	return w, h
}
