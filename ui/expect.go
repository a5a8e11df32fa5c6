package ui

import (
	"fmt"
	"slices"
	"strings"

	"leaselab/engine"
	"leaselab/ui/common"
)

// expectations are the scenario's expectations for the settings the run started with, as the
// engine judged them, and whether all are met.
func (m Model) expectations() ([]engine.ExpectResult, bool) {
	f := m.frame
	if f == nil || f.Summary == nil {
		return nil, false
	}
	return f.Summary.Expectations, f.Summary.ExpectationsMet
}

// whenWords names the settings the expectations are for: "leasing=off", or "" when they
// apply whatever the settings.
func whenWords(rs []engine.ExpectResult) string {
	var whens []string
	for _, r := range rs {
		if r.When != "" && !slices.Contains(whens, r.When) {
			whens = append(whens, r.When)
		}
	}
	return strings.Join(whens, ", ")
}

// verdictView is the verdict once the scenario is done, with the scenario's expectations for
// the settings the run started with; before that, what the scenario expects.
func (m Model) verdictView(w, h int) []string {
	if h <= 0 {
		return nil
	}
	st, f := &m.styles, m.frame
	if f == nil {
		return common.Box(nil, w, h)
	}
	rs, met := m.expectations()
	when := whenWords(rs)
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
	if why := stalled(f); why != "" {
		lines = append(lines, st.Warn.Render("did not finish: "+why))
	}
	return common.Box(lines, w, h)
}

// verdictMarked reports whether a verdict's words end with its mark, ✅ or ❌.
func verdictMarked(v string) bool { return strings.HasSuffix(v, "✅") || strings.HasSuffix(v, "❌") }

// stalled says why the run of frame f did not finish (the watchdog ended it), or "" when it
// has not ended so.
func stalled(f *common.Frame) string {
	if f == nil || f.Summary == nil || !f.Summary.WatchdogEnded {
		return ""
	}
	return f.Summary.DidNotFinish
}
