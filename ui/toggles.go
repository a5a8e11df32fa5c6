package ui

import (
	"strings"

	"leaselab/engine"
)

// toggleInfo is one protocol toggle as the lab shows it: its short name for narrow screens, and
// what each setting makes the workers do. Its key is the KeyMap's (KeyMap.toggle).
type toggleInfo struct {
	short   string
	tiny    string // narrower still, for six toggles in 80 columns (PostgreSQL's lab)
	off, on string
}

// toggles describes every toggle, by engine name.
var toggles = map[string]toggleInfo{
	engine.ToggleLeasing: {short: "leasing", tiny: "leasing",
		off: "a poll loads every Pending row: no claim, no lease, no ownership check",
		on:  "a poll claims one row: Processing, LockedBy = me, LockedUntilUtc = now + lease"},
	engine.ToggleAtomicClaim: {short: "atomic", tiny: "atomic",
		off: "a claim is a plain SELECT, then an UPDATE by Id alone: two can take one row",
		on:  "a claim is one conditional UPDATE in BEGIN IMMEDIATE: one winner"},
	engine.ToggleOwnershipCheck: {short: "own-check", tiny: "owner",
		off: "finalize matches the Id alone: a stale owner's write goes through",
		on:  "finalize needs LockedBy = me: a stale owner's write changes 0 rows, rolls back"},
	engine.ToggleFencing: {short: "fencing", tiny: "fence",
		off: "finalize checks LockedBy only: a stale attempt of the same worker id can write",
		on:  "finalize also needs the LeaseVersion it claimed: a stale attempt changes 0 rows"},
	engine.ToggleSkipLocked: {short: "skip-lock", tiny: "skip",
		off: "a claim waits for a row another transaction has locked, up to lock_timeout",
		on:  "a claim passes over a locked row and takes the next one (FOR UPDATE SKIP LOCKED)"},
	engine.ToggleHeartbeat: {short: "heartbeat", tiny: "beat",
		off: "no renewal: a job longer than the lease loses it to another worker",
		on:  "a working worker renews its lease every heartbeat-every (not a crashed or paused one)"},
}

// toggleNote says what flipping toggle name to on changed and from when: "fencing OFF from the
// next action on — finalize checks LockedBy only: …". fresh is whether no worker has acted yet;
// a flip after that changes a run under way, whose expectations stay those of its start.
func toggleNote(name string, on bool, s engine.Settings, fresh bool) string {
	info := toggles[name]
	word, effect := "OFF", info.off
	if on {
		word, effect = "ON", info.on
	}
	if name == engine.ToggleHeartbeat && on {
		effect = strings.Replace(effect, "heartbeat-every", s.HeartbeatEvery.String(), 1)
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
