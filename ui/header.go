package ui

import (
	"fmt"
	"slices"
	"strings"

	"leaselab/engine"
)

// headerView is the three header lines: the scenario; the LEASING badge with the lease, the
// clock, the step count and auto-play; the other toggles with their keys.
func (m Model) headerView() []string {
	st, w, f := &m.styles, m.layout.width, m.frame
	title := m.target
	if f != nil {
		title = f.Title
	}
	pos := ""
	if i := slices.Index(m.cycle, m.target); i >= 0 {
		pos = fmt.Sprintf("scenario %d/%d (tab)", i+1, len(m.cycle))
	}
	line1 := st.Title.Render("LEASELAB") + "  " + st.Title.Render(title)
	if f != nil && f.DBPath != "" {
		room := w - width(line1) - width(pos) - 8
		if room >= 12 {
			pos += "  db " + cutLeft(f.DBPath, room)
		}
	}
	line1 = pad(line1, max(0, w-width(pos)-2)) + "  " + st.Subtle.Render(pos)
	if f == nil {
		return []string{line1, st.Subtle.Render("no scenario open"), ""}
	}

	s := f.Settings
	badge := st.LeasingOf.Render(" LEASING OFF ")
	if s.Leasing {
		badge = st.LeasingOn.Render(" LEASING ON ")
	}
	parts := []string{
		badge,
		"lease " + st.Title.Render(s.Lease.String()),
		"clock " + st.Title.Render(engine.FormatClock(f.Now)),
		fmt.Sprintf("step %s", st.Title.Render(fmt.Sprint(m.steps))),
	}
	switch {
	case m.free.on:
		free := st.Free.Render(" FREE-RUNNING ") + " " + m.free.paceText() + " (< >, g stops)"
		if sum := f.Summary; sum != nil {
			free += fmt.Sprintf("  processed %d/%d", sum.Outbox.Processed, sum.Messages)
		}
		parts = append(parts, free)
	case m.play.playing:
		parts = append(parts, st.Playing.Render("▶ playing")+" "+m.play.rate())
	default:
		parts = append(parts, "‖ paused")
	}
	switch {
	case f.Done:
		parts = append(parts, st.Title.Render("DONE"))
	case f.ScriptTotal > 0:
		parts = append(parts, fmt.Sprintf("script %d/%d", f.ScriptIndex, f.ScriptTotal))
	}
	line2 := strings.Join(parts, "  ")

	toggle := func(name, k string, on bool) string {
		word := st.ToggleOff.Render(name + " off")
		if on {
			word = st.ToggleOn.Render(name + " on")
		}
		return word + st.Subtle.Render(" ("+k+")")
	}
	toggles := []string{
		toggle("atomic-claim", "a", s.AtomicClaim),
		toggle("ownership-check", "o", s.OwnershipCheck),
		toggle("fencing", "k", s.Fencing),
		toggle("heartbeat", "h", s.Heartbeat),
	}
	if s.ProviderLatency > 0 {
		toggles = append(toggles, "provider latency "+s.ProviderLatency.String())
	}
	line3 := strings.Join(toggles, "  ")
	if w < 100 {
		// Narrow: the toggles without their keys (the ? screen lists them).
		toggles = toggles[:0]
		for _, t := range []struct {
			name string
			on   bool
		}{{"atomic", s.AtomicClaim}, {"own-check", s.OwnershipCheck}, {"fencing", s.Fencing}, {"heartbeat", s.Heartbeat}} {
			if t.on {
				toggles = append(toggles, st.ToggleOn.Render(t.name+" on"))
			} else {
				toggles = append(toggles, st.ToggleOff.Render(t.name+" off"))
			}
		}
		line3 = strings.Join(toggles, " · ")
	}
	return []string{line1, line2, line3}
}
