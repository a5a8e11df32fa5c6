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
		uses := t.Of(st) || s.Scenario.Teaches == t.Name ||
			(t.Name == ToggleGuardedRescue && s.Scenario.Rescuer != nil) ||
			(t.Name != ToggleGuardedRescue && s.Scenario.Skewed())
		if uses {
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
		if t.Of(s) {
			parts = append(parts, t.Name+"=on")
		}
	}
	return parts
}
