// Package retry is the rest of a message's life as both stores (SQLite, PostgreSQL) write it,
// from schema 4 on: a failed attempt that releases its lease (to Pending, claimable again after
// a backoff, or to DeadLettered once the attempts reach a maximum), the claim that honours the
// backoff, the redrive of a dead letter, and the rescue of an expired lease, guarded or not.
//
// It holds the rescuer's requests, results and interface only; the SQL is each store's. A failed
// attempt, the due claim and the redrive are the engine's (engine/retry.go: engine.FailRequest,
// engine.Conn's Fail and ClaimDue, engine.Redriver), which the engine uses.
package retry

import (
	"context"
	"time"

	"leaselab/engine"
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
}

// RescueResult says whether the rescue changed the row.
type RescueResult struct {
	Rescued bool
}

// Conn is a worker connection of a store from schema 4: an engine.Conn, and the rest.
type Conn interface {
	engine.Conn
	// Expired reads the leases that have ended at now, the one that ended first first.
	Expired(ctx context.Context, now time.Time) ([]Expired, error)
	// Rescue moves one expired lease back to Pending (RescueRequest).
	Rescue(ctx context.Context, req RescueRequest) (RescueResult, error)
}
