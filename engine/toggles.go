package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Toggle names, as scenario files, flags and the lab use them.
const (
	ToggleLeasing        = "leasing"
	ToggleAtomicClaim    = "atomic-claim"
	ToggleOwnershipCheck = "ownership-check"
	ToggleFencing        = "fencing"
	ToggleHeartbeat      = "heartbeat"
	// ToggleSkipLocked is a toggle of databases with row locks (PostgreSQL) only.
	ToggleSkipLocked = "skip-locked"
)

// Toggle is one switch of the protocol, declared once in the registry below: every parser, flag
// set, help line, header and the teacher's view reads it from there. What the switch makes the
// workers do is theirs (worker.go reads the Settings field).
type Toggle struct {
	Name   string // the scenario file's key, the --flag, `set NAME on`: "fencing"
	Words  string // the name in words, for help lines: "atomic claim"
	Key    string // the lab's key: "k"
	Letter string // the teacher's table: "F"
	// Short and Tiny name it in the lab's header on narrow screens; Tiny when the header shows
	// more than four toggles besides leasing (PostgreSQL's lab, in 80 columns).
	Short, Tiny string
	Off, On     string // what each setting makes the workers do, as the lab's status line says it
	// RowLocks: only a database that locks rows (PostgreSQL) has this toggle; SQLite's lab
	// shows it as a lesson of the other backend, and its scenario files may still set it.
	RowLocks bool
	Default  bool // its setting in DefaultSettings
	field    func(*Settings) *bool
}

// Help is the toggle's line on the lab's ? screen: "fencing on/off".
func (t Toggle) Help() string {
	if t.RowLocks {
		return t.Words + " on/off (PostgreSQL)"
	}
	return t.Words + " on/off"
}

// Of reads the toggle in s.
func (t Toggle) Of(s Settings) bool { return *t.field(&s) }

// Has reports whether a database has the toggle: rowLocks says whether it locks rows.
func (t Toggle) Has(rowLocks bool) bool { return rowLocks || !t.RowLocks }

// toggles is the registry, in the order of the lab's ? screen. It is built once and never
// changed; Toggles hands out copies.
var toggles = [...]Toggle{
	{Name: ToggleLeasing, Words: "leasing", Key: "l", Letter: "L", Short: "leasing", Tiny: "leasing", Default: true,
		Off:   "a poll loads every Pending row: no claim, no lease, no ownership check",
		On:    "a poll claims one row: Processing, LockedBy = me, LockedUntilUtc = now + lease",
		field: func(s *Settings) *bool { return &s.Leasing }},
	{Name: ToggleAtomicClaim, Words: "atomic claim", Key: "a", Letter: "A", Short: "atomic", Tiny: "atomic", Default: true,
		Off:   "a claim is a plain SELECT, then an UPDATE by Id alone: two can take one row",
		On:    "a claim is one conditional UPDATE in BEGIN IMMEDIATE: one winner",
		field: func(s *Settings) *bool { return &s.AtomicClaim }},
	{Name: ToggleOwnershipCheck, Words: "ownership check", Key: "o", Letter: "O", Short: "own-check", Tiny: "owner", Default: true,
		Off:   "finalize matches the Id alone: a stale owner's write goes through",
		On:    "finalize needs LockedBy = me: a stale owner's write changes 0 rows, rolls back",
		field: func(s *Settings) *bool { return &s.OwnershipCheck }},
	{Name: ToggleFencing, Words: "fencing", Key: "k", Letter: "F", Short: "fencing", Tiny: "fence",
		Off:   "finalize checks LockedBy only: a stale attempt of the same worker id can write",
		On:    "finalize also needs the LeaseVersion it claimed: a stale attempt changes 0 rows",
		field: func(s *Settings) *bool { return &s.Fencing }},
	{Name: ToggleSkipLocked, Words: "skip-locked", Key: "u", Letter: "S", Short: "skip-lock", Tiny: "skip", RowLocks: true, Default: true,
		Off:   "a claim waits for a row another transaction has locked, up to lock_timeout",
		On:    "a claim passes over a locked row and takes the next one (FOR UPDATE SKIP LOCKED)",
		field: func(s *Settings) *bool { return &s.SkipLocked }},
	{Name: ToggleHeartbeat, Words: "heartbeat", Key: "h", Letter: "H", Short: "heartbeat", Tiny: "beat",
		Off:   "no renewal: a job longer than the lease loses it to another worker",
		On:    "a working worker renews its lease every heartbeat-every (not a crashed or paused one)",
		field: func(s *Settings) *bool { return &s.Heartbeat }},
}

// NumToggles is how many toggles the registry declares.
const NumToggles = len(toggles)

// Toggles returns every toggle, in the order of the lab's ? screen.
func Toggles() []Toggle { return slices.Clone(toggles[:]) }

// LookupToggle finds the toggle of that name, the lab's or a headless one (HeadlessToggles).
func LookupToggle(name string) (Toggle, bool) {
	for _, t := range append(toggles[:], headless[:]...) {
		if t.Name == name {
			return t, true
		}
	}
	for _, t := range retryToggles {
		if t.Name == name {
			return t, true
		}
	}
	return Toggle{}, false
}

// ToggleNames lists every toggle of the protocol, which every backend has, in a fixed order.
func ToggleNames() []string {
	var names []string
	for _, t := range toggles {
		if !t.RowLocks {
			names = append(names, t.Name)
		}
	}
	return names
}

// AllToggleNames is ToggleNames and the toggles only some backends have (skip-locked): what a
// scenario file, a flag or the lab may set.
func AllToggleNames() []string {
	names := ToggleNames()
	for _, t := range toggles {
		if t.RowLocks {
			names = append(names, t.Name)
		}
	}
	return names
}

// toggle returns a pointer to the named switch.
func (s *Settings) toggle(name string) (*bool, error) {
	if t, ok := LookupToggle(name); ok {
		return t.field(s), nil
	}
	return nil, fmt.Errorf("unknown toggle %q (known: %s)", name, strings.Join(AllToggleNames(), ", "))
}
