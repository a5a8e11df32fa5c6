package checks

import (
	"fmt"
	"strings"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Pane is the safety checks, drawn from the scene: each check of the run, held, failed,
// open or set aside. It has no keys.
type Pane struct{ common.Scene }

// The checks column: a title that counts the checks by state, then one line per check (wide,
// with its detail under it), as the layout sized it.

// Title heads the checks column: how many hold, fail, wait and are set aside, each with
// the glyph its lines carry.
func (m Pane) Title(w int, wide bool) string {
	st := m.Styles
	if m.Frame == nil || m.Frame.Summary == nil {
		return st.Section.Render(common.Rule("Safety checks", w))
	}
	fails, open, holds, aside, _ := Counts(Classify(m.Frame))
	live := "live"
	if m.Frame.Done {
		live = "final"
	}
	title := fmt.Sprintf("Safety checks (%s): %d of %d hold", live, holds, fails+open+holds)
	if fails > 0 {
		title += fmt.Sprintf(", %d FAIL", fails)
	}
	if open > 0 {
		title += fmt.Sprintf(", %d open", open)
	}
	if aside > 0 {
		title += fmt.Sprintf(" · ○ %d not in the verdict", aside)
	}
	if !wide || common.Width(title)+4 > w {
		title = compactTitle("Checks ("+live+"): ", " ", holds, fails, open, aside)
	}
	if common.Width(title)+4 > w {
		// Every state at once in a narrow column: the glyphs and counts only.
		title = compactTitle("Checks: ", "", holds, fails, open, aside)
	}
	return st.Section.Render(common.Rule(title, w))
}

// Lines is the safety checks in exactly h lines: failing ones first. Wide, each with its
// detail, wrapped under its name; narrow, a glyph and the name. When h is short the checks set
// aside share one line, then one line sums up the rest.
func (m Pane) Lines(w, h int, wide bool) []string {
	if h <= 0 || m.Frame == nil || m.Frame.Summary == nil {
		return common.Box(nil, w, h)
	}
	cs := Classify(m.Frame)
	if lines := m.checkBody(cs, w, wide); len(lines) <= h {
		return common.Box(lines, w, h)
	}
	// One line each, a detail only when it fits whole; then the checks set aside share one.
	var lines []string
	for _, c := range cs {
		lines = append(lines, m.checkLineIn(c, wide, w))
	}
	if len(lines) <= h {
		return common.Box(lines, w, h)
	}
	fails, open, holds, aside, asideFailing := Counts(cs)
	lines = lines[:0]
	for _, c := range cs {
		if c.State != Aside {
			lines = append(lines, m.checkLineIn(c, wide, w))
		}
	}
	if aside > 0 {
		lines = append(lines, m.Styles.Aside.Render(asideSummary(aside, asideFailing)))
	}
	if len(lines) > h {
		// Too little room for every check: a summary, then as many as fit, failing first.
		st := m.Styles
		parts := []string{st.OK.Render(fmt.Sprintf("✓ %d hold", holds))}
		if fails > 0 {
			parts = append(parts, st.Fail.Render(fmt.Sprintf("✗ %d FAIL", fails)))
		}
		if open > 0 {
			parts = append(parts, st.Open.Render(fmt.Sprintf("… %d open", open)))
		}
		if aside > 0 {
			parts = append(parts, st.Aside.Render(fmt.Sprintf("○ %d aside", aside)))
		}
		lines = append([]string{strings.Join(parts, "  ")}, lines...)
	}
	return common.Box(lines, w, h)
}

// checkBody is every check on lines of at most w cells. Wide, a check's detail wraps under its
// name; narrow, a check's line is its glyph and name, and its detail when that fits whole.
func (m Pane) checkBody(cs []Shown, w int, wide bool) []string {
	var lines []string
	aside := 0
	for _, c := range cs {
		if c.State == Aside {
			aside++
		}
		line := m.checkLine(c, wide, w)
		if common.Width(line) <= w {
			lines = append(lines, line)
			continue
		}
		if !wide {
			lines = append(lines, m.checkLineIn(c, false, w))
			continue
		}
		// The detail on lines of its own, under the name.
		name := m.checkLine(Shown{Check: engine.Check{Name: c.Name, Short: c.Short, OK: c.OK}, State: c.State}, wide, w)
		lines = append(lines, name)
		detail := c.Detail
		if c.State == Open {
			detail = "not finished: " + detail
		}
		for _, d := range common.Wrap(detail, w-checkIndent-2) {
			lines = append(lines, common.Spaces(checkIndent+2)+m.Styles.Detail.Render(d))
		}
	}
	if aside > 0 {
		note := "○ not in this lesson's verdict (verdict-checks): shown, not counted"
		if !wide || common.Width(note) > w {
			note = "○ not in this lesson's verdict"
		}
		lines = append(lines, m.Styles.Aside.Render(note))
	}
	return lines
}

// checkLineIn is check c on one line of w cells: with its detail when that fits, else without.
func (m Pane) checkLineIn(c Shown, wide bool, w int) string {
	if line := m.checkLine(c, wide, w); common.Width(line) <= w {
		return line
	}
	return m.checkLine(Shown{Check: engine.Check{Name: c.Name, Short: c.Short, OK: c.OK}, State: c.State}, wide, w)
}

// checkIndent is where a check's name starts in the wide layout, after "✓ ok   ".
const checkIndent = 7

// asideSummary says how many checks are left out of the verdict, and how many of those fail.
func asideSummary(aside, failing int) string {
	s := fmt.Sprintf("○ %d not in this lesson's verdict", aside)
	switch {
	case failing == 1:
		s += " (1 fails)"
	case failing > 1:
		s += fmt.Sprintf(" (%d fail)", failing)
	}
	return s
}

// checkLine renders one check: a mark that is a word or a glyph as well as a colour, the name
// (its short form when the whole does not fit in w cells), the detail. Wide, the marks are words ("✓ ok", "✗ FAIL", "… open", "○ fail"); narrow, glyphs.
func (m Pane) checkLine(c Shown, wide bool, w int) string {
	st := m.Styles
	var mark string
	style := st.Info
	switch c.State {
	case Fails:
		mark, style = st.Fail.Render("✗ FAIL"), st.Fail
	case Open:
		mark, style = st.Open.Render("… open"), st.Open
	case Aside:
		mark, style = st.Aside.Render("○ ok  "), st.Aside
		if !c.OK {
			mark = st.Aside.Render("○ fail")
		}
	default:
		mark = st.OK.Render("✓ ok  ")
	}
	if !wide {
		mark = st.OK.Render("✓")
		switch c.State {
		case Fails:
			mark = st.Fail.Render("✗")
		case Open:
			mark = st.Open.Render("…")
		case Aside:
			mark = st.Aside.Render("○")
		}
	}
	name := c.Name
	if c.Short != "" && common.Width(mark)+1+common.Width(name) > w {
		name = c.Short // its name in fewer words, where the whole one does not fit
	}
	line := mark + " " + style.Render(name)
	if c.Detail == "" {
		return line
	}
	detail := " — " + c.Detail
	if c.State == Open {
		detail = " — not finished: " + c.Detail
	}
	return line + st.Detail.Render(detail)
}

// compactTitle is the checks' title in glyphs: "Checks (live): ✓ 3 ✗ 1 FAIL … 1 open ○ 3
// aside", gap between each glyph and its count.
func compactTitle(head, gap string, holds, fails, open, aside int) string {
	title := fmt.Sprintf("%s✓%s%d", head, gap, holds)
	if fails > 0 {
		title += fmt.Sprintf(" ✗%s%d FAIL", gap, fails)
	}
	if open > 0 {
		title += fmt.Sprintf(" … %d open", open)
	}
	if aside > 0 {
		title += fmt.Sprintf(" ○%s%d aside", gap, aside)
	}
	return title
}
