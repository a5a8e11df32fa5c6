package engine

import (
	"fmt"
	"strings"
)

// headlessSettings adds to a summary's settings the InRescue toggles the run uses: those that
// are on, the one its lesson teaches, guarded-rescue with a rescuer, db-clock and
// provider-fencing with a skewed clock. A run that uses none has the settings it always had.
func (s *Session) headlessSettings(m map[string]string) {
	st := s.InitialSettings()
	for _, t := range TogglesIn(InRescue) {
		if s.usesToggle(t, st) {
			m[t.Name] = OnOff(t.Of(st))
		}
	}
	var skews []string
	for _, w := range s.Scenario.Workers {
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
func (s *Session) UsesToggle(t Toggle) bool { return s.usesToggle(t, s.InitialSettings()) }

// usesToggle is UsesToggle with the run's initial settings st.
func (s *Session) usesToggle(t Toggle, st Settings) bool {
	switch t.Where {
	case InRetries:
		return s.env.retry.plan.active() || st.Backoff || st.DeadLetter
	case InRescue:
		return t.Of(st) != t.Default || s.Scenario.Teaches == t.Name ||
			(t.UsedWith&UsedWithRescuer != 0 && s.Scenario.Rescuer != nil) ||
			(t.UsedWith&UsedWithSkew != 0 && s.Scenario.Skewed())
	}
	return true
}

// lessonToggles names the toggles of the registry's other groups (InRetries, InRescue) the run
// uses, in the registry's order.
func (s *Session) lessonToggles() []string {
	var names []string
	for _, t := range toggles {
		if t.Where != InLab && s.UsesToggle(t) {
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
