package store

import (
	"time"

	"leaselab/store/internal/shared"
)

// HoldFinalize makes every finalize transaction of connections opened afterwards wait d inside
// the transaction (holding SQLite's write lock), calling notify first. It is for crash tests
// (leaselab worker --hold-finalize), never for normal runs.
func (db *DB) HoldFinalize(d time.Duration, notify func(key string)) {
	db.hold = shared.NewFinalizeHold(d, notify)
}
