package storetest

import (
	"testing"

	"leaselab/engine"
)

// A backend's Capabilities are true of what it hands out: each flag it sets, its connections
// have the port for: the engine converts to it without asking again.
func testCapabilities(t *testing.T, b Backend) {
	db := b.New(t)
	caps := db.Capabilities()
	c := Connect(t, db)
	for _, p := range []struct {
		name      string
		flag, has bool
	}{
		{"row-locks (RowLocker)", caps.RowLocks, is[engine.RowLocker](c)},
		{"rescue (RescueConn)", caps.Rescue, is[engine.RescueConn](c)},
		{"batches (HostConn)", caps.Batches, is[engine.HostConn](c)},
		{"trace (Tracer)", caps.Trace, is[engine.Tracer](c)},
	} {
		if p.flag && !p.has {
			t.Errorf("Capabilities says %s, and a connection has no such port", p.name)
		}
	}
	if missing := caps.Missing(engine.CapabilityNames()); len(missing) == len(engine.CapabilityNames()) {
		t.Errorf("Capabilities says this backend can do nothing beyond DB and Conn: %v", missing)
	}
}

// is reports whether c has the port P.
func is[P any](c engine.Conn) bool {
	_, ok := c.(P)
	return ok
}
