package engine

import (
	"fmt"
	"strings"
	"time"
)

// Settings are the protocol's switches and durations. The lab flips them while a scenario runs;
// a worker reads them at the start of each action, so a change applies from the next action on.
type Settings struct {
	Leasing        bool // claim before processing; off: the naive bulk load
	AtomicClaim    bool // BEGIN IMMEDIATE + conditional UPDATE; off: select, then update
	OwnershipCheck bool // finalize requires Status='Processing' AND LockedBy=me
	Fencing        bool // finalize also requires the lease version of the claim
	Heartbeat      bool // a working worker renews its lease every HeartbeatEvery
	// SkipLocked: on a database with row locks (PostgreSQL), a claim passes over a row another
	// transaction has locked and takes the next one (FOR UPDATE SKIP LOCKED); off, it waits
	// for that lock, up to LockTimeout. SQLite has no row locks: there it changes nothing.
	SkipLocked bool
	// GuardedRescue, DBClock and ProviderFencing are the toggles of the rescuer and of skewed
	// clocks (toggles.go, InRescue): the rescue's UPDATE checks again what it saw; lease times
	// come from the database's clock, not the worker's; the provider refuses a stale lease version.
	GuardedRescue, DBClock, ProviderFencing bool
	// StrictExpiry (boundary.go, on by default): a lease is its owner's up to and including
	// LockedUntilUtc; off, a claim takes it at that instant already (issue 32's coarse-clock).
	StrictExpiry bool
	// LockTimeout bounds a claim's wait for a row lock while SkipLocked is off (lock_timeout).
	LockTimeout    time.Duration
	Lease          time.Duration // lease length
	HeartbeatEvery time.Duration
	// ProviderLatency is how long, in scenario time, a status check takes to answer.
	ProviderLatency time.Duration
	// Retry (toggles.go InRetries, retry_defaults.go, backoff.go): what a failed attempt does next.
	Backoff       bool          // a failed attempt waits (BackoffPolicy) before the next claim may take it
	DeadLetter    bool          // after MaxAttempts failed attempts the message is DeadLettered
	BackoffPolicy string        // BackoffFixed or BackoffExponential
	BackoffBase   time.Duration // the fixed wait, or the exponential's first
	BackoffCap    time.Duration // the exponential's longest wait
	MaxAttempts   int           // with DeadLetter: attempts (claims) before a message is parked
}

// DefaultSettings are the lesson's AFTER settings: leasing with an atomic claim and an
// ownership-checked finalize; no fencing, no heartbeat; a 500 ms lease.
func DefaultSettings() Settings {
	s := Settings{
		Lease:          500 * time.Millisecond,
		HeartbeatEvery: 200 * time.Millisecond,
		LockTimeout:    defaultLockTimeout,
		BackoffPolicy:  BackoffExponential, BackoffBase: defaultBackoffBase, BackoffCap: defaultBackoffCap,
		MaxAttempts: defaultMaxAttempts,
	}
	for _, t := range toggles {
		*t.field(&s) = t.Default
	}
	return s
}

// defaultLockTimeout is how long a claim waits for a row lock with skip-locked off before it
// gives up (PostgreSQL's lock_timeout): long enough to see, short enough not to stall a lesson.
const defaultLockTimeout = 300 * time.Millisecond

// DefaultHeartbeat is the heartbeat interval for a lease when none is given: two fifths of it
// (200 ms for a 500 ms lease), so that two heartbeats fit in one lease.
func DefaultHeartbeat(lease time.Duration) time.Duration {
	return max(lease*2/5, time.Millisecond).Truncate(time.Millisecond)
}

// Get reads the named toggle.
func (s Settings) Get(name string) (bool, error) {
	p, err := s.toggle(name)
	if err != nil {
		return false, err
	}
	return *p, nil
}

// Set sets the named toggle.
func (s *Settings) Set(name string, on bool) error {
	p, err := s.toggle(name)
	if err != nil {
		return err
	}
	*p = on
	return nil
}

// OnOff renders a switch as the scenario files write it.
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// ParseOnOff reads on or off, the only words a scenario's toggles take: "yes", "1" or "true"
// were once taken as on, and a file that said "db-clock: yes" ran with a meaning it never wrote.
func ParseOnOff(s string) (bool, error) {
	switch strings.TrimSpace(s) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("want on or off, got %q", s)
}

// Describe is a one-line summary of the settings.
func (s Settings) Describe() string {
	parts := []string{}
	for _, name := range AllToggleNames() {
		t, _ := LookupToggle(name)
		// The toggles only some backends have are named when they are not their default.
		if v := t.Of(s); !t.RowLocks || v != t.Default {
			parts = append(parts, name+"="+OnOff(v))
		}
	}
	parts = append(parts, headlessDescribe(s)...)
	if !s.SkipLocked {
		parts = append(parts, "lock-timeout="+s.LockTimeout.String())
	}
	parts = append(parts, "lease="+s.Lease.String())
	if s.Heartbeat {
		parts = append(parts, "heartbeat-every="+s.HeartbeatEvery.String())
	}
	if s.ProviderLatency > 0 {
		parts = append(parts, "provider-latency="+s.ProviderLatency.String())
	}
	parts = append(parts, s.describeRetry()...)
	return strings.Join(parts, " ")
}

// The one lease range, for scenario files, `set lease` steps and every command's --lease flag.
const (
	minLease = time.Millisecond
	maxLease = 24 * time.Hour
)

// CheckLease says whether d is a lease leaselab accepts: whole milliseconds from minLease to
// maxLease. The database stores times in milliseconds, so a finer lease could not be kept.
func CheckLease(d time.Duration) error {
	switch {
	case d == 0:
		return fmt.Errorf("want a positive duration, e.g. 500ms (a lease is 1ms to 24h)")
	case d < minLease || d > maxLease:
		return fmt.Errorf("%s is out of range: a lease is 1ms to 24h", d)
	case d%time.Millisecond != 0:
		return fmt.Errorf("%s is finer than a millisecond: a lease is whole milliseconds", d)
	}
	return nil
}

// CheckHeartbeat says whether the heartbeat fits the lease: a renewal every HeartbeatEvery must
// come before the lease runs out. It matters only while the heartbeat is on.
func (s Settings) CheckHeartbeat() error {
	if !s.Heartbeat {
		return nil
	}
	if s.HeartbeatEvery < time.Millisecond || s.HeartbeatEvery >= s.Lease {
		return fmt.Errorf("with the heartbeat on, heartbeat-every (%s) must be at least 1ms and shorter than the lease (%s), or the lease runs out between heartbeats", s.HeartbeatEvery, s.Lease)
	}
	return nil
}

// fitHeartbeat switches the heartbeat interval to the lease's default when the current one
// does not fit a heartbeat that is on; it reports whether it changed anything.
func (s *Settings) fitHeartbeat() bool {
	if s.CheckHeartbeat() == nil {
		return false
	}
	if d := DefaultHeartbeat(s.Lease); d < s.Lease {
		s.HeartbeatEvery = d
		return true
	}
	return false
}
