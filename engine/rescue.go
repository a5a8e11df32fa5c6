package engine

import (
	"context"
	"time"
)

// Expired is a lease that had ended when the rescuer looked: the row and what it saw of it.
type Expired struct {
	ID             int64
	IdempotencyKey string
	LockedBy       string
	LockedUntil    time.Time
	LeaseVersion   int64
}

// RescueRequest moves one expired lease back to Pending. Guarded, the UPDATE checks again what
// the rescuer saw (Processing, the lease still ended at Now, the same owner and lease version) and
// changes nothing otherwise. Unguarded it trusts its read and names the row by Id alone, as
// River's rescuer did before its issue #1302: a row finalized in between is set back to Pending
// and processed again.
type RescueRequest struct {
	Seen    Expired
	Now     time.Time
	Guarded bool
	// Fail: a pruner's write (prune.go): the message is failed, DeadLettered with LastError
	// PruneError, instead of going back to Pending. The guard is the same.
	Fail bool
}

// RescueResult says whether the rescue changed the row (its rows affected were 1).
type RescueResult struct {
	Rescued bool
}

// RescueConn is a connection a rescuer sweeps with: both stores' connections from schema 4
// implement it. The read and the write are separate statements, as a sweeper's are: what the
// row became in between is what the guard is for.
type RescueConn interface {
	// Expired reads the leases that have ended at now, the one that ended first first.
	Expired(ctx context.Context, now time.Time) ([]Expired, error)
	// Rescue moves one expired lease back to Pending (RescueRequest).
	Rescue(ctx context.Context, req RescueRequest) (RescueResult, error)
}
