package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"leaselab/engine"
)

// runStart is what the lab knows of the settings a run started with. A toggle flipped before
// any worker has acted is the run's own setting, as the same flag would be for "leaselab run":
// the scenario's expectations for that setting apply. A toggle flipped later changes a run
// already under way: the expectations stay those of the settings it started with, and the
// verdict says so.
type runStart struct {
	settings engine.Settings // the session's initial settings, with the toggles flipped before the first action
	initial  engine.Settings // the session's initial settings
	midRun   []string        // toggles flipped after the first action, as "fencing=off", latest last
}

// newRunStart is the start of a freshly opened session.
func newRunStart(f *frame) runStart {
	if f == nil {
		return runStart{}
	}
	return runStart{settings: f.Initial, initial: f.Initial}
}

// toggled records that toggle name is now on, in a run whose frame is f.
func (r *runStart) toggled(name string, on bool, f *frame) {
	if f != nil && f.Total == (engine.WorkerLedger{}) {
		_ = r.settings.Set(name, on)
		return
	}
	set := name + "=" + engine.OnOff(on)
	r.midRun = append(slices.DeleteFunc(r.midRun, func(s string) bool { return strings.HasPrefix(s, name+"=") }), set)
}

// flipped reports whether the run started with other toggles than the session's initial ones.
func (r runStart) flipped() bool {
	for _, t := range engine.ToggleNames() {
		a, _ := r.settings.Get(t)
		b, _ := r.initial.Get(t)
		if a != b {
			return true
		}
	}
	return false
}

// expectations are the scenario's expectations for the settings the run started with, each
// with its actual value from the frame's summary, and whether all are met. The engine evaluates
// them for the session's initial settings; the lab evaluates them again when a toggle was
// flipped before the first action, the way "leaselab run" does with the same flag.
func (m Model) expectations() ([]engine.ExpectResult, bool) {
	f := m.frame
	if f == nil || f.Summary == nil {
		return nil, false
	}
	if !m.start.flipped() {
		return f.Summary.Expectations, f.Summary.ExpectationsMet
	}
	return evaluate(f.Summary, f.Expect, m.start.settings)
}

// evaluate checks the blocks that apply to settings s against sum. A scenario that declares
// nothing expects its verdict to pass. (The engine's Session.expectations, for other settings.)
func evaluate(sum *engine.Summary, blocks []engine.ExpectBlock, s engine.Settings) ([]engine.ExpectResult, bool) {
	var out []engine.ExpectResult
	met := true
	for _, b := range blocks {
		if !b.Applies(s) {
			continue
		}
		for _, e := range b.Items {
			actual, ok := sum.Metric(e.Metric)
			r := engine.ExpectResult{Expect: e.String(), When: b.WhenString(), Line: e.Line, Actual: actual}
			r.OK = ok && holds(e, actual)
			met = met && r.OK
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		verdict, _ := sum.Metric("verdict")
		out = append(out, engine.ExpectResult{Expect: "verdict = pass", Actual: verdict, OK: sum.Passed})
		met = sum.Passed
	}
	return out, met
}

// holds compares an actual value with an expectation, as the engine does.
func holds(e engine.Expectation, actual string) bool {
	if e.Word != "" {
		return (actual == e.Word) == (e.Op == "=")
	}
	v, err := strconv.ParseInt(actual, 10, 64)
	if err != nil {
		return false
	}
	switch e.Op {
	case "=":
		return v == e.Value
	case "!=":
		return v != e.Value
	case "<":
		return v < e.Value
	case "<=":
		return v <= e.Value
	case ">":
		return v > e.Value
	case ">=":
		return v >= e.Value
	}
	return false
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
	banner := st.Failing.Render(" VERDICT: FAIL ") + " " + st.Fail.Render(sum.Verdict)
	if sum.Passed {
		banner = st.Pass.Render(" VERDICT: PASS ") + " " + st.OK.Render(sum.Verdict)
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
	case !met:
		expect = st.Warn.Render(fmt.Sprintf("✗ not as expected%s: %d of %d met; expected %s",
			when, n, len(rs), strings.Join(missed, "; ")))
	case !sum.Passed:
		expect = st.OK.Render(fmt.Sprintf("✓ as expected%s: %d of %d met", when, n, len(rs))) + " — the failure is the lesson"
	default:
		expect = st.OK.Render(fmt.Sprintf("✓ as expected%s: %d of %d met", when, n, len(rs)))
	}
	lines := []string{banner, expect}
	if len(m.start.midRun) > 0 {
		lines = append(lines, st.Warn.Render("! toggled after the run began ("+strings.Join(m.start.midRun, ", ")+
			"): the expectations are those of the settings it started with"))
	}
	return box(lines, w, h)
}
