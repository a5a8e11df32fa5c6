package postgres_test

import (
	"context"
	"testing"

	"leaselab/engine"
)

// A claim that finds its one claimable row locked by another claim under way lost a race: it
// is ClaimLost for that row, with the winner the server names, never blocked by an empty
// owner until no time.
func TestLostRaceIsNotABlockedClaim(t *testing.T) {
	db := seededDB(t, 1)
	ctx := context.Background()
	a := rowLocker(t, db)
	if res, err := a.LockClaim(ctx, claimReq("Worker-A", false)); err != nil || res.Outcome != engine.ClaimWon {
		t.Fatalf("lock = %+v, %v", res, err)
	}
	b := rowLocker(t, db).(engine.Conn)
	res, err := b.Claim(ctx, claimReq("Worker-B", false))
	if err != nil || res.Outcome != engine.ClaimLost || res.Blocker != "PAY-001" || res.PrevOwner != "Worker-A" {
		t.Fatalf("claim beside Worker-A's claim under way = %+v, %v; want lost to Worker-A for PAY-001", res, err)
	}
	ev := engine.Event{Kind: engine.EvClaim, Worker: "Worker-B", ID: "Worker-B", Outcome: res.Outcome.String(), Key: res.Blocker, PriorOwner: res.PrevOwner}
	if got := engine.Sentence(ev); got != "Worker-B claim lost the race for PAY-001: Worker-A's claim took it first; it claims again" {
		t.Fatalf("sentence %q", got)
	}
}
