package postgres

import "leaselab/engine"

// Capabilities: PostgreSQL locks rows, so a claim can pass over a locked row (SKIP LOCKED) or
// wait for it; its connections rescue, claim in batches and trace, and the schema reads and
// redrives what failed attempts left.
func (db *DB) Capabilities() engine.Capabilities {
	return engine.Capabilities{RowLocks: true, Rescue: true, Batches: true, Trace: true, Retry: db, Redrive: db}
}
