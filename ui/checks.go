package ui

import (
	"fmt"
	"slices"
	"strings"

	"leaselab/engine"
)

// checkState is how the checks pane shows one safety check.
type checkState int

// Check states, in the order the pane lists them.
const (
	checkFails checkState = iota // a check of the verdict that fails
	checkHolds                   // a check of the verdict that holds
	checkOpen                    // fails only because the run is not finished yet
	checkAside                   // not in this lesson's verdict (verdict-checks): shown dimmed
)

// shownCheck is a check with the state the pane gives it.
type shownCheck struct {
	engine.Check
	state checkState
}

// classify gives each check of the frame its state. A check the scenario leaves out of its
// verdict is set aside, whatever its outcome, so that it never reads as a plain FAIL beside a
// passing verdict. While the run goes on, a check that fails only because work is left (not
// every message processed yet, a crashed owner's lease not reclaimed yet) is open, not failed.
func classify(f *frame) []shownCheck {
	if f == nil || f.Summary == nil {
		return nil
	}
	sum := f.Summary
	out := make([]shownCheck, 0, len(sum.Checks))
	for _, c := range sum.Checks {
		sc := shownCheck{Check: c, state: checkHolds}
		switch {
		case !c.Decides:
			sc.state = checkAside
		case c.OK:
		case !f.Done && unfinished(c, sum):
			sc.state = checkOpen
		default:
			sc.state = checkFails
		}
		out = append(out, sc)
	}
	slices.SortStableFunc(out, func(a, b shownCheck) int { return int(a.state) - int(b.state) })
	return out
}

// unfinished reports whether failing check c can still come to hold as the run goes on.
func unfinished(c engine.Check, sum *engine.Summary) bool {
	switch c.ID {
	case engine.CheckNoneLost:
		return true
	case engine.CheckProcessedOnce:
		return sum.ProcessedMoreThanOnce == 0
	case engine.CheckRecovered:
		for _, r := range sum.Recovery {
			if r.ProcessedTimes > 1 {
				return false
			}
		}
		return true
	}
	return false
}

// checkLinesWanted is how many lines the checks pane wants: a title, a line per check, and a
// note when some are not in the verdict.
func checkLinesWanted(f *frame) int {
	if f == nil || f.Summary == nil {
		return 0
	}
	n := len(f.Summary.Checks)
	for _, c := range f.Summary.Checks {
		if !c.Decides {
			return n + 1
		}
	}
	return n
}

// checkCounts counts the checks in each state.
func checkCounts(cs []shownCheck) (fails, open, holds, aside, asideFailing int) {
	for _, c := range cs {
		switch c.state {
		case checkFails:
			fails++
		case checkOpen:
			open++
		case checkHolds:
			holds++
		case checkAside:
			aside++
			if !c.OK {
				asideFailing++
			}
		}
	}
	return
}

// checksView is the safety checks, live: one line each under a title, failing ones first, or
// one summary line when h is 1.
func (m Model) checksView(w, h int) []string {
	if h <= 0 {
		return nil
	}
	st := &m.styles
	if m.frame == nil || m.frame.Summary == nil {
		return box([]string{st.Section.Render("Safety checks")}, w, h)
	}
	cs := classify(m.frame)
	fails, open, holds, aside, asideFailing := checkCounts(cs)
	live := "live"
	if m.frame.Done {
		live = "final"
	}
	parts := []string{st.Section.Render("Checks (" + live + ")"), st.OK.Render(fmt.Sprintf("✓ %d hold", holds))}
	if fails > 0 {
		names := []string{}
		for _, c := range cs[:fails] {
			names = append(names, c.Name)
		}
		parts = append(parts, st.Fail.Render(fmt.Sprintf("✗ %d FAIL:", fails))+" "+strings.Join(names, "; "))
	}
	if open > 0 {
		parts = append(parts, st.Subtle.Render(fmt.Sprintf("… %d open", open)))
	}
	if aside > 0 {
		parts = append(parts, st.Subtle.Render(asideSummary(aside, asideFailing)))
	}
	summary := cut(strings.Join(parts, "  "), w)

	title := fmt.Sprintf("Safety checks (%s): %d of %d hold", live, holds, fails+open+holds)
	if open > 0 {
		title += fmt.Sprintf(", %d open", open)
	}
	if aside > 0 {
		title += fmt.Sprintf(" · ○ %d not in the verdict", aside)
	}
	lines := []string{st.Section.Render(rule(title, w))}
	for _, c := range cs {
		lines = append(lines, m.checkLine(c))
	}
	if aside > 0 {
		lines = append(lines, st.Subtle.Render("○ not in this lesson's verdict (its verdict-checks): shown, not counted"))
	}
	if len(lines) > h {
		// Too little room for every check: the summary, then as many checks as fit, failing first.
		lines[0] = summary
	}
	return box(lines, w, h)
}

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

// checkLine renders one check: a mark that is a word as well as a colour, the name, the detail.
func (m Model) checkLine(c shownCheck) string {
	st := &m.styles
	switch c.state {
	case checkFails:
		return st.Fail.Render("✗ FAIL") + " " + c.Name + st.Subtle.Render(" — "+c.Detail)
	case checkOpen:
		return st.Subtle.Render("… open " + c.Name + " — not finished: " + c.Detail)
	case checkAside:
		mark := "○ ok  "
		if !c.OK {
			mark = "○ fail"
		}
		return st.Subtle.Render(mark + " " + c.Name + " — " + c.Detail)
	}
	return st.OK.Render("✓ ok  ") + " " + c.Name + st.Subtle.Render(" — "+c.Detail)
}
