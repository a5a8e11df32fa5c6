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
		pos = fmt.Sprintf("scenario %d/%d (%s)", i+1, len(m.cycle), keyName(m.keys.NextScenario))
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
	if m.changes.toggles[engine.ToggleLeasing] {
		badge = st.Changed.Render("•") + badge // just flipped
	}
	parts := []string{
		badge,
		"lease " + st.Title.Render(s.Lease.String()),
		"clock " + st.Title.Render(engine.FormatClock(f.Now)),
	}
	if !m.free.on { // free-running workers take no steps: the count would stand still
		parts = append(parts, fmt.Sprintf("step %s", st.Title.Render(fmt.Sprint(m.steps))))
	}
	switch {
	case m.free.on:
		free := st.Free.Render(" FREE-RUNNING ") + " " + m.free.paceText()
		if m.free.failed == 0 {
			free += " (" + keyNames(m.keys.Slower, m.keys.Faster) + ", " + keyName(m.keys.Free) + " stops)"
		}
		if sum := f.Summary; sum != nil {
			free += fmt.Sprintf("  processed %d/%d", sum.Outbox.Processed, sum.Messages)
		}
		if n := m.free.failed; n > 0 {
			free += "  " + st.Error.Render(fmt.Sprintf("✗ %d %s failed", n, plural(n, "worker")))
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

	// Line 3: the other toggles with their keys; the one just flipped marked •, the one the
	// lesson teaches marked ◆. Narrow: short names, no keys (the ? screen lists them).
	narrow := w < 100
	var toggleWords []string
	for _, name := range engine.ToggleNames()[1:] {
		info := toggles[name]
		on, _ := s.Get(name)
		label := name
		if narrow {
			label = info.short
		}
		word := st.ToggleOff.Render(label + " off")
		if on {
			word = st.ToggleOn.Render(label + " on")
		}
		if !narrow {
			word += st.Subtle.Render(" (" + m.toggleKey(name) + ")")
		}
		switch {
		case m.changes.toggles[name]:
			word = st.Changed.Render("•") + word
		case name == f.Teaches && narrow:
			word = "◆" + word
		}
		toggleWords = append(toggleWords, word)
	}
	sep := "  "
	if narrow {
		sep = " · "
	}
	line3 := strings.Join(toggleWords, sep)
	if !narrow && s.ProviderLatency > 0 {
		line3 += sep + "provider latency " + s.ProviderLatency.String()
	}
	if _, ok := toggles[f.Teaches]; ok && !narrow {
		line3 += sep + st.Subtle.Render("◆ this lesson: "+f.Teaches+" ("+m.toggleKey(f.Teaches)+")")
	}
	return []string{line1, line2, line3}
}
