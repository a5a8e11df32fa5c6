// Package header is the lab's header: the scenario and where it is in the tab cycle, the
// LEASING badge with the lease, the clock, the steps and what runs the workers, and the other
// toggles with their keys. It draws from an Input the shell fills.
package header

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	"path/filepath"
	"slices"
	"strings"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Input is what the header draws: the scene, the width, and what the shell knows besides the
// frame.
type Input struct {
	common.Scene
	Width  int
	Target string   // the scenario open, or being opened
	Cycle  []string // the scenarios in tab order
	TempDB bool     // the database is removed at exit
	Keys   Keys
	Steps  int // steps that did something since the scenario opened

	Free       bool   // the workers run on their own (g)
	FreePace   string // their pace, in words
	FreeFailed int    // free-running workers that stopped on an error
	FreeHeld   string // how the room slows the free run down ("" when it does not)
	Playing    bool   // auto-play (p)
	PlayRate   string // its rate, in words
}

// Keys are the lab's keys the header names.
type Keys struct {
	NextScenario, Slower, Faster, Free key.Binding
	Toggle                             func(name string) key.Binding // a toggle's key
}

// Lines is the three header lines: the scenario; the LEASING badge with the lease, the
// clock, the step count and auto-play; the other toggles with their keys. Nothing is cut: a
// narrow window drops the least telling items of a line instead.
func Lines(m Input) []string {
	st, w, f := m.Styles, m.Width, m.Frame
	line1 := m.titleLine(w)
	if f == nil {
		return []string{line1, st.Subtle.Render("no scenario open"), ""}
	}
	return []string{line1, m.stateLine(w), m.togglesLine(w)}
}

// titleLine is the scenario's title, where it is in the tab cycle and the database file. A
// title too long for the window keeps its head, the words before its first colon.
func (m Input) titleLine(w int) string {
	st, f := m.Styles, m.Frame
	title := m.Target
	if f != nil {
		title = f.Title
	}
	pos, short := "", ""
	if i := slices.Index(m.Cycle, m.Target); i >= 0 {
		pos = fmt.Sprintf("scenario %d/%d (%s)", i+1, len(m.Cycle), common.KeyName(m.Keys.NextScenario))
		short = fmt.Sprintf("%d/%d (%s)", i+1, len(m.Cycle), common.KeyName(m.Keys.NextScenario))
	}
	brand := st.Title.Render("LEASELAB") + "  "
	if common.Width(brand)+common.Width(title)+2+common.Width(pos) > w {
		pos = short
	}
	if common.Width(brand)+common.Width(title)+2+common.Width(pos) > w {
		if head, _, ok := strings.Cut(title, ":"); ok {
			title = head
		}
	}
	left := brand + st.Title.Render(title)
	if f != nil && f.DBPath != "" && m.TempDB {
		if note := "db temporary (removed at exit)"; common.Width(left)+common.Width(pos)+4+len(note) <= w {
			pos += "  " + note
		} else if common.Width(left)+common.Width(pos)+4+len("db temporary") <= w {
			pos += "  db temporary"
		}
	} else if f != nil && f.DBPath != "" {
		room := w - common.Width(left) - common.Width(pos) - 4 - len("db ")
		switch {
		case common.Width(f.DBPath) <= room:
			pos += "  db " + f.DBPath
		case common.Width(filepath.Base(f.DBPath)) <= room:
			pos += "  db " + filepath.Base(f.DBPath)
		}
	}
	return common.Pad(left, max(0, w-common.Width(pos)-2)) + "  " + st.Subtle.Render(pos)
}

// part is an item of a header line; a narrow window leaves out the highest ranks first, or
// writes them shorter when they have a short form.
type part struct {
	text string
	rank int
	alt  string // the short form, when there is one
}

// fitParts joins parts with two spaces, or one, leaving out the highest ranks until the line
// fits in w cells.
func fitParts(parts []part, w int) string {
	for drop := 9; drop >= 0; drop-- {
		var kept []string
		for _, p := range parts {
			switch {
			case p.rank <= drop && p.text != "":
				kept = append(kept, p.text)
			case p.alt != "":
				kept = append(kept, p.alt)
			}
		}
		for _, sep := range []string{"  ", " "} {
			if s := strings.Join(kept, sep); common.Width(s) <= w || drop == 0 && sep == " " {
				return s
			}
		}
	}
	return ""
}

// stateLine is the LEASING badge with its key, the lease, the clock, the step count and what
// runs the workers (paused, auto-play, the free run).
func (m Input) stateLine(w int) string {
	st, f := m.Styles, m.Frame
	s := f.Settings
	badge := st.LeasingOf.Render(" LEASING OFF ")
	if s.Leasing {
		badge = st.LeasingOn.Render(" LEASING ON ")
	}
	if k := common.KeyName(m.Keys.Toggle(engine.ToggleLeasing)); k != "" {
		badge += " (" + k + ")"
	}
	switch {
	case m.Changes.Toggles[engine.ToggleLeasing]:
		badge = st.Changed.Render("•") + badge // just flipped
	case f.Teaches == engine.ToggleLeasing:
		badge = st.Lesson.Render("◆") + badge
	}
	parts := []part{
		{text: badge},
		{text: "lease " + st.Title.Render(s.Lease.String()), rank: 1},
		{text: "clock " + st.Title.Render(engine.FormatClock(f.Now))},
	}
	if !m.Free { // free-running workers take no steps: the count would stand still
		parts = append(parts, part{text: "step " + st.Title.Render(fmt.Sprint(m.Steps)), rank: 1})
	}
	switch {
	case m.Free:
		pace := part{text: m.FreePace, rank: 1}
		if m.FreeFailed == 0 {
			pace = part{text: m.FreePace + " (" + common.KeyNames(m.Keys.Slower, m.Keys.Faster) + ", " + common.KeyName(m.Keys.Free) + " stops)", rank: 3, alt: pace.text}
		}
		parts = append(parts, part{text: st.Free.Render(" FREE-RUNNING ")}, pace)
		if sum := f.Summary; sum != nil {
			parts = append(parts, part{text: fmt.Sprintf("processed %d/%d", sum.Outbox.Processed, sum.Messages), rank: 0})
		}
		if m.FreeHeld != "" {
			parts = append(parts, part{text: st.Warn.Render(m.FreeHeld), rank: 1, alt: st.Warn.Render("held back")})
		}
		if n := m.FreeFailed; n > 0 {
			parts = append(parts, part{text: st.Error.Render(fmt.Sprintf("✗ %d %s failed", n, common.Plural(n, "worker"))), rank: 0})
		}
	case m.Playing:
		parts = append(parts, part{text: st.Playing.Render("▶ playing") + " " + m.PlayRate, rank: 0})
	default:
		parts = append(parts, part{text: "‖ paused", rank: 0})
	}
	switch {
	case f.Done:
		parts = append(parts, part{text: st.Title.Render("DONE"), rank: 0})
	case f.ScriptTotal > 0:
		parts = append(parts, part{text: fmt.Sprintf("script %d/%d", f.ScriptIndex, f.ScriptTotal), rank: 2})
	}
	return fitParts(parts, w)
}

// togglesLine is the other toggles with their keys, the one just flipped marked •, the one the
// lesson teaches marked ◆ and named at the end. Narrow: the toggles' short names. The toggles of
// a lesson's run (the frame's LessonToggles) come after the lab's; a window too narrow for all
// writes the lab's shorter, then leaves out those the lesson does not teach.
func (m Input) togglesLine(w int) string {
	f := m.Frame
	narrow := w < 100
	var shown []engine.Toggle
	for _, name := range append(engine.AllToggleNames(), f.LessonToggles...) {
		if t, _ := engine.LookupToggle(name); name != engine.ToggleLeasing && t.Has(f.RowLocks) {
			shown = append(shown, t) // leasing is the state line's badge
		}
	}
	label := func(t engine.Toggle) string {
		switch {
		case narrow && len(shown) > 4:
			return t.Tiny // six toggles in 80 columns (PostgreSQL's lab)
		case narrow:
			return t.Short
		}
		return t.Name
	}
	if len(f.LessonToggles) == 0 {
		return m.fitToggles(shown, label, w)
	}
	own := slices.DeleteFunc(slices.Clone(shown), func(t engine.Toggle) bool { return t.Where == engine.InLab && t.Name != f.Teaches })
	shorter := func(t engine.Toggle) string {
		if t.Where == engine.InLab && !narrow {
			return t.Short
		}
		return label(t)
	}
	line := m.fitToggles(shown, label, w)
	for _, try := range []struct {
		ts    []engine.Toggle
		label func(engine.Toggle) string
	}{{shown, shorter}, {own, label}} {
		if common.Width(line) <= w {
			break
		}
		line = m.fitToggles(try.ts, try.label, w)
	}
	return line
}

// fitToggles is the toggles line of the toggles ts, each named by label, fitted to w cells as
// fitParts does: the lesson's mark long when it fits, else short.
func (m Input) fitToggles(ts []engine.Toggle, label func(engine.Toggle) string, w int) string {
	st, f := m.Styles, m.Frame
	s := f.Settings
	narrow := w < 100
	var parts []part
	for _, t := range ts {
		name := t.Name
		word := st.ToggleOff.Render(label(t) + " off")
		if t.Of(s) {
			word = st.ToggleOn.Render(label(t) + " on")
		}
		word += " (" + common.KeyName(m.Keys.Toggle(name)) + ")"
		if name == f.Teaches {
			word = st.Lesson.Render("◆") + word
		}
		if m.Changes.Toggles[name] {
			word = st.Changed.Render("•") + word
		}
		parts = append(parts, part{text: word, rank: 0})
	}
	if s.ProviderLatency > 0 {
		parts = append(parts, part{text: "provider latency " + s.ProviderLatency.String(), rank: 2})
	}
	if _, ok := engine.LookupToggle(f.Teaches); ok {
		long := st.Lesson.Render("◆ this lesson: " + f.Teaches + " (" + common.KeyName(m.Keys.Toggle(f.Teaches)) + ")")
		short := st.Lesson.Render("◆ this lesson")
		if narrow {
			long, short = short, st.Lesson.Render("◆ lesson")
		}
		line := fitParts(append(slices.Clone(parts), part{text: long, rank: 0}), w)
		if common.Width(line) <= w {
			return line
		}
		parts = append(parts, part{text: short, rank: 1})
	}
	return fitParts(parts, w)
}
