package store

import "leaselab/engine"

// Capabilities: a SQLite file takes one write lock for the whole database, so it has no row
// locks; its connections rescue, claim in batches and trace, and the file reads and redrives
// what failed attempts left.
func (db *DB) Capabilities() engine.Capabilities {
	return engine.Capabilities{Rescue: true, Batches: true, Trace: true, Retry: db, Redrive: db}
}
