package ui

import (
	"strings"

	"leaselab/engine"
)

// toggleNote says what flipping toggle name to on changed and from when: "fencing OFF from the
// next action on — finalize checks LockedBy only: …". fresh is whether no worker has acted yet;
// a flip after that changes a run under way, whose expectations stay those of its start.
func toggleNote(name string, on bool, s engine.Settings, fresh bool) string {
	t, _ := engine.LookupToggle(name)
	word, effect := "OFF", t.Off
	if on {
		// The words may name the heartbeat's interval: "renews its lease every heartbeat-every".
		word, effect = "ON", strings.Replace(t.On, "heartbeat-every", s.HeartbeatEvery.String(), 1)
	}
	label := name
	if name == engine.ToggleLeasing {
		label = "LEASING"
	}
	note := label + " " + word + " from the next action on — " + effect
	switch {
	case name != engine.ToggleLeasing && !s.Leasing:
		note += " (no effect while leasing is off)"
	case !fresh:
		note += " (the run is under way: its verdict keeps the expectations of its start)"
	}
	return note
}
