package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Toggle names of the rescuer and of skewed clocks (issue 20).
const (
	ToggleGuardedRescue   = "guarded-rescue"
	ToggleDBClock         = "db-clock"
	ToggleProviderFencing = "provider-fencing"
)

// headless are the registry's toggles that have no lab key yet: scenario files, `set` steps,
// expectations and the command line's flags read them (LookupToggle, HeadlessToggles); the lab's
// ? screen, header and teacher's table (Toggles, ToggleNames, AllToggleNames) do not list them,
// so the lab's screens are as they were. A report names one only while it is on.
var headless = [...]Toggle{
	{Name: ToggleGuardedRescue, Words: "guarded rescue", Letter: "G", Short: "g-rescue", Tiny: "grsc",
		Off:   "the rescuer's UPDATE names the row by Id alone: a row finalized since its read is set back to Pending",
		On:    "the rescuer's UPDATE also needs Processing, the lease ended, the owner and lease version it saw: 0 rows if the row moved on",
		field: func(s *Settings) *bool { return &s.GuardedRescue }},
	{Name: ToggleDBClock, Words: "database clock", Letter: "D", Short: "db-clock", Tiny: "dbclk",
		Off:   "a worker's lease times come from its own clock, skew and all",
		On:    "lease times come from one clock, the database's (now() in the statement): a worker's skew does not move them",
		field: func(s *Settings) *bool { return &s.DBClock }},
	{Name: ToggleProviderFencing, Words: "provider fencing", Letter: "P", Short: "p-fence", Tiny: "pfnc",
		Off:   "the provider answers any call",
		On:    "the provider refuses a call whose lease version is older than the newest it has seen for the key",
		field: func(s *Settings) *bool { return &s.ProviderFencing }},
}

// HeadlessToggles returns the toggles without a lab key (see headless), in a fixed order.
func HeadlessToggles() []Toggle { return slices.Clone(headless[:]) }

// HeadlessToggleNames lists the names of HeadlessToggles.
func HeadlessToggleNames() []string {
	var names []string
	for _, t := range headless {
		names = append(names, t.Name)
	}
	return names
}

// headlessSettings adds to a summary's settings the headless toggles the run uses: those that
// are on, the one its lesson teaches, guarded-rescue with a rescuer, db-clock and
// provider-fencing with a skewed clock. A run that uses none has the settings it always had.
func (s *Session) headlessSettings(m map[string]string) {
	st := s.InitialSettings()
	for _, t := range headless {
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

// headlessDescribe names, for Settings.Describe, the headless toggles that are on.
func headlessDescribe(s Settings) []string {
	var parts []string
	for _, t := range headless {
		if t.Of(s) {
			parts = append(parts, t.Name+"=on")
		}
	}
	return parts
}
