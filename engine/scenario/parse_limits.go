package scenario

import (
	"leaselab/engine"
	"leaselab/engine/words"
	"strings"
	"time"
)

// MaxScenarioSize is the largest scenario file Parse accepts.
const MaxScenarioSize = 64 << 10

// checkHeartbeat applies the heartbeat rule: the interval must fit in the lease. It is checked
// when the heartbeat is on, or when the file set heartbeat-every itself; an interval the file
// never wrote is the lease's default, and is not the file's mistake.
func (p *parser) checkHeartbeat() error {
	st := &p.sc.Settings
	if p.seen["heartbeat-every"] == 0 {
		st.HeartbeatEvery = engine.DefaultHeartbeat(st.Lease)
	}
	if p.seen["heartbeat-every"] == 0 && !st.Heartbeat {
		return nil
	}
	if st.HeartbeatEvery >= time.Millisecond && st.HeartbeatEvery < st.Lease {
		return nil
	}
	if p.seen["heartbeat-every"] == 0 {
		return p.errf(max(p.seen["lease"], p.seen[engine.ToggleHeartbeat]), "a %s lease leaves no room for the heartbeat (on at line %d): with the heartbeat on, the lease must be at least 2ms", st.Lease, p.seen[engine.ToggleHeartbeat])
	}
	return p.errf(max(p.seen["heartbeat-every"], p.seen["lease"]), "heartbeat-every (%s) must be at least 1ms and shorter than the lease (%s), or the lease runs out between heartbeats", st.HeartbeatEvery, st.Lease)
}

// lineLabel names a line in an error about its content: its key or first word, printable.
func lineLabel(raw string) string {
	f := strings.Fields(raw)
	if len(f) == 0 {
		return "a blank line"
	}
	w := f[0]
	if k, _, ok := strings.Cut(w, ":"); ok {
		w = k + ":"
	}
	return words.Escape(w)
}

type workerRef struct {
	line int
	name string
}
