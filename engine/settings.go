package engine

import (
	"fmt"
	"strings"
	"time"
)

// Settings are the protocol's switches and durations. The lab flips them while a scenario runs;
// a worker reads them at the start of each action, so a change applies from the next action on.
type Settings struct {
	Leasing        bool          // claim before processing; off: the naive bulk load
	AtomicClaim    bool          // BEGIN IMMEDIATE + conditional UPDATE; off: select, then update
	OwnershipCheck bool          // finalize requires Status='Processing' AND LockedBy=me
	Fencing        bool          // finalize also requires the lease version of the claim
	Heartbeat      bool          // a working worker renews its lease every HeartbeatEvery
	Lease          time.Duration // lease length
	HeartbeatEvery time.Duration
	// ProviderLatency is how long, in scenario time, a status check takes to answer.
	ProviderLatency time.Duration
}

// DefaultSettings are the lesson's AFTER settings: leasing with an atomic claim and an
// ownership-checked finalize; no fencing, no heartbeat; a 500 ms lease.
func DefaultSettings() Settings {
	return Settings{
		Leasing:        true,
		AtomicClaim:    true,
		OwnershipCheck: true,
		Lease:          500 * time.Millisecond,
		HeartbeatEvery: 200 * time.Millisecond,
	}
}

// DefaultHeartbeat is the heartbeat interval for a lease when none is given: two fifths of it
// (200 ms for a 500 ms lease), so that two heartbeats fit in one lease.
func DefaultHeartbeat(lease time.Duration) time.Duration {
	return max(lease*2/5, time.Millisecond).Truncate(time.Millisecond)
}

// Toggle names, as scenario files, flags and the lab use them.
const (
	ToggleLeasing        = "leasing"
	ToggleAtomicClaim    = "atomic-claim"
	ToggleOwnershipCheck = "ownership-check"
	ToggleFencing        = "fencing"
	ToggleHeartbeat      = "heartbeat"
)

// ToggleNames lists every toggle name in a fixed order.
func ToggleNames() []string {
	return []string{ToggleLeasing, ToggleAtomicClaim, ToggleOwnershipCheck, ToggleFencing, ToggleHeartbeat}
}

// toggle returns a pointer to the named switch.
func (s *Settings) toggle(name string) (*bool, error) {
	switch name {
	case ToggleLeasing:
		return &s.Leasing, nil
	case ToggleAtomicClaim:
		return &s.AtomicClaim, nil
	case ToggleOwnershipCheck:
		return &s.OwnershipCheck, nil
	case ToggleFencing:
		return &s.Fencing, nil
	case ToggleHeartbeat:
		return &s.Heartbeat, nil
	}
	return nil, fmt.Errorf("unknown toggle %q (known: %s)", name, strings.Join(ToggleNames(), ", "))
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

// ParseOnOff reads on/off, true/false, yes/no, 1/0.
func ParseOnOff(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("want on or off, got %q", s)
}

// Describe is a one-line summary of the settings.
func (s Settings) Describe() string {
	parts := []string{}
	for _, t := range ToggleNames() {
		v, _ := s.Get(t)
		parts = append(parts, t+"="+OnOff(v))
	}
	parts = append(parts, "lease="+s.Lease.String())
	if s.Heartbeat {
		parts = append(parts, "heartbeat-every="+s.HeartbeatEvery.String())
	}
	if s.ProviderLatency > 0 {
		parts = append(parts, "provider-latency="+s.ProviderLatency.String())
	}
	return strings.Join(parts, " ")
}
