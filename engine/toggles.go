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
	// ToggleBackoff: a failed attempt waits before the message may be claimed again.
	ToggleBackoff = "backoff"
	// ToggleDeadLetter: a message that has failed MaxAttempts times is parked.
	ToggleDeadLetter = "dead-letter"
	// ToggleGuardedRescue: the rescuer's UPDATE is guarded by what it saw.
	ToggleGuardedRescue = "guarded-rescue"
	// ToggleDBClock: lease times come from the database's clock.
	ToggleDBClock = "db-clock"
	// ToggleProviderFencing: the provider refuses a stale lease version.
	ToggleProviderFencing = "provider-fencing"
	// ToggleStrictExpiry: a claim takes a lease only after the instant it ends (boundary.go).
	ToggleStrictExpiry = "strict-expiry"
)

// Where says which group of the registry a toggle belongs to, and so whether the lab shows it.
type Where int

const (
	// InLab: a key of the lab, a line of its ? screen, its header and the teacher's table.
	InLab Where = iota
	// InRetries: what a failed attempt does next (backoff, dead-letter). The lab shows one, and
	// its key, only in a lesson whose run uses it (Probe.UsesToggle).
	InRetries
	// InRescue: the rescuer's guard and the fixes of skewed clocks. The lab shows one, and its
	// key, and a report names one, only while the run uses it (Probe.UsesToggle).
	InRescue
)

// Toggle is one switch of the protocol, declared once in the registry below: every parser, flag
// set, help line, header and the teacher's view reads it from there. What the switch makes the
// workers do is theirs (worker.go reads the Settings field).
type Toggle struct {
	Name   string // the scenario file's key, the --flag, `set NAME on`: "fencing"
	Words  string // the name in words, for help lines: "atomic claim"
	Key    string // the lab's key: "k" (an InRetries or InRescue one acts only where the run uses it)
	Letter string // the teacher's table: "F"
	// Short and Tiny name it in the lab's header on narrow screens; Tiny when the header shows
	// more than four toggles besides leasing (PostgreSQL's lab, in 80 columns).
	Short, Tiny string
	Off, On     string // what each setting makes the workers do, as the lab's status line says it
	// RowLocks: only a database that locks rows (PostgreSQL) has this toggle; SQLite's lab
	// shows it as a lesson of the other backend, and its scenario files may still set it.
	RowLocks bool
	Default  bool  // its setting in DefaultSettings
	Where    Where // its group: the lab shows InLab's always, the others where the run uses them
	// UsedWith is what in a run, beyond the toggle being off its default or taught, makes
	// an InRescue toggle one the run uses (Probe.UsesToggle): a rescuer, a skewed clock.
	UsedWith Uses
	// OnWithRescuer: on by default in a run with a rescuer, unless a flag or the file set it.
	OnWithRescuer bool
	// OfRescuer: the rescuer's switch, not the workers': a stress run of hosted workers (who
	// obey no toggle) takes it, for the rescuer beside them.
	OfRescuer bool
	field     func(*Settings) *bool
}

// Uses is what in a run makes a toggle apply to it (Toggle.UsedWith), one bit a thing.
type Uses int

const (
	// UsedWithRescuer: the run has a rescuer.
	UsedWithRescuer Uses = 1 << iota
	// UsedWithSkew: a worker's clock is skewed.
	UsedWithSkew
)

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

// toggles is the registry: the lab's toggles first, in the order of its ? screen, then the
// others by group. It is built once and never changed; Toggles and TogglesIn hand out copies.
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
	{Name: ToggleBackoff, Words: "retry backoff", Key: "j", Letter: "B", Short: "backoff", Tiny: "back", Where: InRetries,
		Off:   "a failed attempt's message is claimable again at once: the workers hammer a failing provider",
		On:    "a failed attempt sets NextAttemptUtc (backoff-policy, full jitter, capped): claims wait for it",
		field: func(s *Settings) *bool { return &s.Backoff }},
	{Name: ToggleDeadLetter, Words: "dead letters", Key: "m", Letter: "D", Short: "dead-ltr", Tiny: "dlq", Where: InRetries,
		Off:   "no attempt limit: a poison message is retried for ever",
		On:    "after max-attempts failed attempts the message is DeadLettered: never claimed again, until a redrive",
		field: func(s *Settings) *bool { return &s.DeadLetter }},
	{Name: ToggleGuardedRescue, Words: "guarded rescue", Key: "G", Letter: "G", Short: "g-rescue", Tiny: "grsc", Where: InRescue,
		UsedWith: UsedWithRescuer, OnWithRescuer: true, OfRescuer: true,
		Off:   "the rescuer's UPDATE names the row by Id alone: a row finalized since its read is set back to Pending",
		On:    "the rescuer's UPDATE also needs Processing, the lease ended, the owner and lease version it saw: 0 rows if the row moved on",
		field: func(s *Settings) *bool { return &s.GuardedRescue }},
	{Name: ToggleDBClock, Words: "database clock", Key: "c", Letter: "C", Short: "db-clock", Tiny: "dbclk", Where: InRescue, UsedWith: UsedWithSkew,
		Off:   "a worker's lease times come from its own clock, skew and all",
		On:    "lease times come from one clock, the database's (now() in the statement): a worker's skew does not move them",
		field: func(s *Settings) *bool { return &s.DBClock }},
	{Name: ToggleProviderFencing, Words: "provider fencing", Key: "P", Letter: "P", Short: "p-fence", Tiny: "pfnc", Where: InRescue, UsedWith: UsedWithSkew,
		Off:   "the provider answers any call",
		On:    "the provider refuses a call whose lease version is older than the newest it has seen for the key",
		field: func(s *Settings) *bool { return &s.ProviderFencing }},
	{Name: ToggleStrictExpiry, Words: "strict expiry", Key: "E", Letter: "E", Short: "strict-exp", Tiny: "sexp", Where: InRescue, Default: true,
		Off:   "a claim reclaims a lease at the instant it ends (LockedUntilUtc <= now): the owner's last instant is another's first",
		On:    "a claim reclaims a lease only once it has ended (LockedUntilUtc < now): the instant it ends is still its owner's",
		field: func(s *Settings) *bool { return &s.StrictExpiry }},
}

// NumToggles is how many toggles the lab has (Toggles): the first entries of the registry,
// those InLab (a test holds them to it).
const NumToggles = 6

// NumRegistry is how many toggles the registry declares, of every group: the lab has a key for
// each (Registry), those after the first NumToggles acting only where the run uses them.
const NumRegistry = len(toggles)

// Toggles returns the lab's toggles, in the order of its ? screen.
func Toggles() []Toggle { return TogglesIn(InLab) }

// TogglesIn returns the registry's toggles of one group, in the registry's order.
func TogglesIn(w Where) []Toggle {
	var ts []Toggle
	for _, t := range toggles {
		if t.Where == w {
			ts = append(ts, t)
		}
	}
	return ts
}

// ToggleNamesIn lists the names of TogglesIn(w).
func ToggleNamesIn(w Where) []string {
	var names []string
	for _, t := range TogglesIn(w) {
		names = append(names, t.Name)
	}
	return names
}

// Registry returns every toggle the registry declares, of every group: what a flag set offers.
func Registry() []Toggle { return slices.Clone(toggles[:]) }

// LookupToggle finds the toggle of that name, of any group.
func LookupToggle(name string) (Toggle, bool) {
	for _, t := range toggles {
		if t.Name == name {
			return t, true
		}
	}
	return Toggle{}, false
}

// ToggleNames lists every toggle of the protocol, which every backend has, in a fixed order.
func ToggleNames() []string {
	var names []string
	for _, t := range Toggles() {
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
	for _, t := range Toggles() {
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
