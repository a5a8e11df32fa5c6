package engine

import (
	"fmt"
	"strings"
)

// headlessSettings adds to a summary's settings the InRescue toggles the run uses: those that
// are on, the one its lesson teaches, guarded-rescue with a rescuer, db-clock and
// provider-fencing with a skewed clock. A run that uses none has the settings it always had.
func (v *runView) headlessSettings(m map[string]string) {
	st := v.initial
	for _, t := range TogglesIn(InRescue) {
		if v.usesToggle(t, st) {
			m[t.Name] = OnOff(t.Of(st))
		}
	}
	var skews []string
	for _, w := range v.sc.Workers {
		if w.Skew != 0 {
			skews = append(skews, fmt.Sprintf("%s=%+dms", w.Short, w.Skew.Milliseconds()))
		}
	}
	if len(skews) > 0 {
		m["skew"] = strings.Join(skews, ",")
	}
}

// headlessDescribe names, for Settings.Describe, the InRescue toggles that are on.
func headlessDescribe(s Settings) []string {
	var parts []string
	for _, t := range TogglesIn(InRescue) {
		if t.Of(s) != t.Default {
			parts = append(parts, t.Name+"="+OnOff(t.Of(s)))
		}
	}
	return parts
}

// UsesToggle reports whether the session's run uses toggle t, and so whether the lab shows it
// with its key: the lab's own (InLab) always; the InRetries ones when the run's provider fails
// or backoff or dead letters are on (the report then names them); an InRescue one when it is
// not at its default, when the lesson teaches it, or when the run has what its entry's UsedWith
// names (guarded-rescue a rescuer; db-clock and provider-fencing a skewed clock): the report
// then names it.
func (p Probe) UsesToggle(t Toggle) bool {
	_, initial := p.crew.settings.both()
	v := runView{sc: p.sc, env: p.crew.env}
	return v.usesToggle(t, initial)
}

// usesToggle is UsesToggle with the run's initial settings st.
func (v *runView) usesToggle(t Toggle, st Settings) bool {
	switch t.Where {
	case InRetries:
		return v.env.retry.plan.active() || st.Backoff || st.DeadLetter
	case InRescue:
		return t.Of(st) != t.Default || v.sc.Teaches == t.Name ||
			(t.UsedWith&UsedWithRescuer != 0 && v.sc.Rescuer != nil) ||
			(t.UsedWith&UsedWithSkew != 0 && v.sc.Skewed())
	}
	return true
}

// lessonToggles names the toggles of the registry's other groups (InRetries, InRescue) the run
// uses, in the registry's order.
func (v *runView) lessonToggles() []string {
	var names []string
	for _, t := range toggles {
		if t.Where != InLab && v.usesToggle(t, v.initial) {
			names = append(names, t.Name)
		}
	}
	return names
}

// WithRescuer turns on the toggles that are on by default in a run with a rescuer
// (Toggle.OnWithRescuer), except those set says the user set.
func (s *Settings) WithRescuer(set func(name string) bool) {
	for _, t := range toggles {
		if t.OnWithRescuer && !set(t.Name) {
			*t.field(s) = true
		}
	}
}
