package engine

import (
	"fmt"
	"slices"
	"strings"
)

// A scenario's expectations describe its script's own run, under the settings it started with.
// A person at the lab can take a run off that path: switch a toggle once workers have acted, crash
// or restart or pause a worker, move the clock, step one worker, redrive a message, let the
// workers run free. The expectations would then judge another run than the one they were written
// for, and could say "not as expected" beside a verdict whose checks all hold, or "as expected"
// about figures the change made. So the session records every such move (the commands' run
// methods, StartFree), and the summary says the expectations were not judged, and why
// (Summary.ExpectationsNotJudged); the verdict stands, since its checks judge what happened.

// offScript names what took the run off its script, in the order it first happened; nil for
// the script's own run.
type offScript []string

// left records that what took the run off its script; a toggle is named once, with its latest
// value ("atomic-claim switched off mid-run").
func (o *offScript) left(what string) {
	if name, _, ok := strings.Cut(what, " switched "); ok {
		*o = slices.DeleteFunc(*o, func(w string) bool { return strings.HasPrefix(w, name+" switched ") })
	} else if slices.Contains(*o, what) {
		return
	}
	*o = append(*o, what)
}

// byHand records what, a command's move off the script, when it happened (err is nil).
func (o *offScript) byHand(err error, what string) {
	if err == nil {
		o.left(what)
	}
}

// toggled records a toggle switched by a person once workers have acted: before that it is the
// run's own setting (Session.InitialSettings), which the expectations follow.
func (o *offScript) toggled(name string, on bool) {
	o.left(fmt.Sprintf("%s switched %s mid-run", name, OnOff(on)))
}

// notJudged is why the expectations are not judged: "" when they are.
func (v *runView) notJudged() string {
	if len(v.offScript) > 0 {
		return "the run left the script (" + strings.Join(v.offScript, ", ") + "): the expectations describe the script's own run, so they are not judged; the verdict is the safety checks' alone"
	}
	if unforeseen := v.unforeseenSettings(); len(unforeseen) > 0 {
		return "the run started with " + strings.Join(unforeseen, ", ") + ", which the scenario's expectations do not foresee (they were written for its own setting), so they are not judged; the verdict is the safety checks' alone"
	}
	return ""
}

// unforeseenSettings names the toggles the run started with at another value than the
// scenario's own, where no expectation block of the scenario names that toggle: its expectations
// were written for the scenario's setting, and would judge another run ("dead-letter=on").
// A toggle an expectation block names ("expect when backoff=off:") is foreseen either way.
func (v *runView) unforeseenSettings() []string {
	sc := v.sc
	if len(sc.Expect) == 0 {
		return nil // a scenario that declares nothing expects every check to hold, whatever the settings
	}
	named := map[string]bool{}
	for _, b := range sc.Expect {
		for name := range b.When {
			named[name] = true
		}
	}
	initial := v.initial
	var out []string
	for _, t := range Registry() {
		if named[t.Name] {
			continue
		}
		own, err1 := sc.Own(t.Name)
		now, err2 := initial.Get(t.Name)
		if err1 == nil && err2 == nil && own != now {
			out = append(out, t.Name+"="+OnOff(now))
		}
	}
	return out
}
