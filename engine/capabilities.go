package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Capabilities is what a backend can do beyond what every DB and Conn does. A backend says it
// once (DB.Capabilities); the engine, the explorer and the command line read this value instead
// of probing the database's type, and a lesson names what it needs (`requires: row-locks`).
// What the DB itself does is its port here, nil when it cannot; what its connections do is a
// flag, and each connection the DB hands out then has that port (storetest checks both).
type Capabilities struct {
	// RowLocks: the database locks rows one by one (PostgreSQL), so skip-locked and a lock step
	// mean something; its connections are RowLockers.
	RowLocks bool
	// Rescue: its connections read and rescue expired leases (RescueConn).
	Rescue bool
	// Batches: its connections claim and finalize many messages a statement (HostConn), as a
	// hosted worker does.
	Batches bool
	// Trace: its connections record the SQL of each action (Tracer).
	Trace bool
	// Retry reads what failed attempts left on a message; nil when the database cannot.
	Retry RetryReader
	// Redrive puts a dead-lettered message back to Pending; nil when the database cannot.
	Redrive Redriver
}

// capabilityName is one capability as a requires: line names it.
type capabilityName struct {
	name string
	has  func(Capabilities) bool
}

// capabilityNames are the names a scenario's requires: line gives the capabilities, in order.
var capabilityNames = []capabilityName{
	{"row-locks", func(c Capabilities) bool { return c.RowLocks }},
	{"rescue", func(c Capabilities) bool { return c.Rescue }},
	{"batches", func(c Capabilities) bool { return c.Batches }},
	{"trace", func(c Capabilities) bool { return c.Trace }},
	{"retry", func(c Capabilities) bool { return c.Retry != nil }},
	{"redrive", func(c Capabilities) bool { return c.Redrive != nil }},
}

// CapRowLocks is the name of Capabilities.RowLocks in a scenario's requires: line.
const CapRowLocks = "row-locks"

// CapabilityNames is every name a requires: line may give, in order.
func CapabilityNames() []string {
	out := make([]string, len(capabilityNames))
	for i, c := range capabilityNames {
		out[i] = c.name
	}
	return out
}

// CheckCapability refuses a name that is not a capability's.
func CheckCapability(name string) error {
	if slices.Contains(CapabilityNames(), name) {
		return nil
	}
	return fmt.Errorf("unknown capability %q (known: %s)", name, strings.Join(CapabilityNames(), ", "))
}

// Missing is the names in need (a scenario's Requires) that c lacks, in need's order.
func (c Capabilities) Missing(need []string) []string {
	var out []string
	for _, n := range need {
		i := slices.IndexFunc(capabilityNames, func(e capabilityName) bool { return e.name == n })
		if i < 0 || !capabilityNames[i].has(c) {
			out = append(out, n)
		}
	}
	return out
}
