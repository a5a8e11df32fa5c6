package ui

import (
	"fmt"
	"slices"
	"strings"

	"leaselab/engine"
)

// runStart is what the lab knows of how a run started. The engine itself treats a toggle flipped
// before any worker has acted as the run's own setting (Session.InitialSettings), and judges the
// expectations for it; a toggle flipped later changes a run already under way, and the lab names
// it beside the verdict.
type runStart struct {
	midRun []string // toggles flipped after the first action, as "fencing=off", latest last
}

// newRunStart is the start of a freshly opened session.
func newRunStart(*frame) runStart { return runStart{} }

// toggled records that toggle name is now on, in a run whose frame is f.
func (r *runStart) toggled(name string, on bool, f *frame) {
	if f != nil && f.Total == (engine.WorkerLedger{}) {
		return // before the first action: the run's own setting
	}
	set := name + "=" + engine.OnOff(on)
	r.midRun = append(slices.DeleteFunc(r.midRun, func(s string) bool { return strings.HasPrefix(s, name+"=") }), set)
}

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
		return box(nil, w, h)
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
		return box([]string{st.Subtle.Render("Verdict when the scenario is done; expected" + when + ": " + strings.Join(items, ", "))}, w, h)
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
	left := m.leftScript()
	switch {
	case len(left) > 0:
		// The expectations describe the script's own run: after moves of the learner's they
		// would judge another run, and could say ✗ beside a verdict whose checks all hold.
		expect = st.Subtle.Render(fmt.Sprintf("expectations not judged: the run left the script (%s); the verdict is the safety checks' alone",
			strings.Join(left, ", ")))
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
	if len(m.start.midRun) > 0 {
		lines = append(lines, st.Warn.Render("! toggled after the run began ("+strings.Join(m.start.midRun, ", ")+
			"): the expectations are those of the settings it started with"))
	}
	return box(lines, w, h)
}

// verdictMarked reports whether a verdict's words end with its mark, ✅ or ❌.
func verdictMarked(v string) bool { return strings.HasSuffix(v, "✅") || strings.HasSuffix(v, "❌") }

// stalled says why the run of frame f did not finish (the watchdog ended it), or "" when it
// has not ended so.
func stalled(f *frame) string {
	if f == nil || f.Summary == nil || !f.Summary.WatchdogEnded {
		return ""
	}
	return f.Summary.DidNotFinish
}

// offScript names what a command that takes a run off its script did; "" for the script's own.
func offScript(c engine.Command) string {
	switch c.(type) {
	case engine.CmdFree:
		return "a free run"
	case engine.CmdCrash:
		return "a crash by hand"
	case engine.CmdRestart:
		return "a restart by hand"
	case engine.CmdPause:
		return "a pause by hand"
	case engine.CmdClock, engine.CmdPastLease:
		return "the clock moved by hand"
	case engine.CmdStepWorker:
		return "a worker stepped by hand"
	}
	return ""
}

// leftScript names what took the run off its script, from the history up to its position: a
// free run, or a worker, a crash or the clock moved by hand. Empty for the script's own run.
func (m Model) leftScript() []string {
	var out []string
	t := m.line
	if !t.valid {
		return nil
	}
	for _, e := range t.entries[:t.pos] {
		if w := offScript(e.Command); w != "" && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
