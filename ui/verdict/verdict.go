// Package verdict is the verdict pane: once the scenario is done, its verdict with the
// scenario's expectations for the settings the run started with; before that, what the scenario
// expects. It draws from the frame alone.
package verdict

import (
	"fmt"
	"slices"
	"strings"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Pane draws the verdict from the screen's scene.
type Pane struct{ Scene common.Scene }

// Expectations are the scenario's expectations for the settings the run started with, as the
// engine judged them, and whether all are met.
func (p Pane) Expectations() ([]engine.ExpectResult, bool) {
	f := p.Scene.Frame
	if f == nil || f.Summary == nil {
		return nil, false
	}
	return f.Summary.Expectations, f.Summary.ExpectationsMet
}

// WhenWords names the settings the expectations are for: "leasing=off", or "" when they
// apply whatever the settings.
func WhenWords(rs []engine.ExpectResult) string {
	var whens []string
	for _, r := range rs {
		if r.When != "" && !slices.Contains(whens, r.When) {
			whens = append(whens, r.When)
		}
	}
	return strings.Join(whens, ", ")
}

// View is the verdict once the scenario is done, with the scenario's expectations for
// the settings the run started with; before that, what the scenario expects.
func (p Pane) View(w, h int) []string {
	if h <= 0 {
		return nil
	}
	st, f := p.Scene.Styles, p.Scene.Frame
	if f == nil {
		return common.Box(nil, w, h)
	}
	rs, met := p.Expectations()
	when := WhenWords(rs)
	if when != "" {
		when = " with " + when
	}
	if !f.Done || f.Summary == nil {
		items := make([]string, 0, len(rs))
		for _, r := range rs {
			items = append(items, r.Expect)
		}
		return common.Box([]string{st.Subtle.Render("Verdict when the scenario is done; expected" + when + ": " + strings.Join(items, ", "))}, w, h)
	}
	sum := f.Summary
	// The verdict's closing ✅ or ❌ wraps with the word before it, never alone on a line.
	words := sum.Verdict
	if i := strings.LastIndex(words, " "); i > 0 && verdictMarked(words) {
		words = words[:i] + "\u00a0" + words[i+1:]
	}
	banner := st.Failing.Render(" VERDICT: FAIL ") + " " + st.Fail.Render(words)
	if sum.Passed {
		banner = st.Pass.Render(" VERDICT: PASS ") + " " + st.OK.Render(words)
	}
	n := 0
	var missed []string
	for _, r := range rs {
		if r.OK {
			n++
		} else {
			missed = append(missed, fmt.Sprintf("%s, got %s", r.Expect, r.Actual))
		}
	}
	var expect string
	switch {
	case sum.ExpectationsNotJudged != "":
		// The expectations describe the script's own run: after moves of the learner's they
		// would judge another run, and could say ✗ beside a verdict whose checks all hold.
		// The engine says which moves (engine/offscript.go).
		expect = st.Subtle.Render("expectations not judged: " + sum.ExpectationsNotJudged)
	case !met:
		expect = st.Warn.Render(fmt.Sprintf("✗ not as expected%s: %d of %d met; expected %s",
			when, n, len(rs), strings.Join(missed, "; ")))
	case !sum.Passed:
		expect = st.OK.Render(fmt.Sprintf("✓ as expected%s: %d of %d met", when, n, len(rs))) + " — the failure is the lesson"
	default:
		expect = st.OK.Render(fmt.Sprintf("✓ as expected%s: %d of %d met", when, n, len(rs)))
	}
	lines := []string{banner, expect}
	if why := Stalled(f); why != "" {
		lines = append(lines, st.Warn.Render("did not finish: "+why))
	}
	return common.Box(lines, w, h)
}

// verdictMarked reports whether a verdict's words end with its mark, ✅ or ❌.
func verdictMarked(v string) bool { return strings.HasSuffix(v, "✅") || strings.HasSuffix(v, "❌") }

// Stalled says why the run of frame f did not finish (the watchdog ended it), or "" when it
// has not ended so.
func Stalled(f *common.Frame) string {
	if f == nil || f.Summary == nil || !f.Summary.WatchdogEnded {
		return ""
	}
	return f.Summary.DidNotFinish
}

// Lines is the verdict (once the scenario is done) or what the scenario expects, wrapped
// to w cells rather than cut.
func (p Pane) Lines(w int) []string {
	if p.Scene.Frame == nil {
		return nil
	}
	var lines []string
	for _, line := range p.View(1<<12, 4) {
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
