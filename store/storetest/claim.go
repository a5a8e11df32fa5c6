package storetest

import (
	"context"
	"testing"
	"time"

	"leaselab/engine"
)

func testClaimTakesOldest(t *testing.T, b Backend) {
	db := seeded(t, b, 3)
	c := Connect(t, db)
	res := mustClaim(t, c, claimAt("Worker-A", t0, 500*time.Millisecond))
	if res.Message.IdempotencyKey != "PAY-001" || res.Message.LeaseVersion != 1 || !res.Message.LockedUntil.Equal(t0.Add(500*time.Millisecond)) {
		t.Fatalf("claim = %+v, want PAY-001 won at v1 until t0+500ms", res)
	}
	r := RowByKey(t, db, "PAY-001")
	if r.Status != engine.StatusProcessing || r.LockedBy != "Worker-A" || !r.LockedUntil.Equal(t0.Add(500*time.Millisecond)) ||
		r.Attempts != 1 || r.LeaseVersion != 1 {
		t.Fatalf("row after claim = %+v", r)
	}
	if next := mustClaim(t, c, claimAt("Worker-A", t0, time.Second)); next.Message.IdempotencyKey != "PAY-002" {
		t.Fatalf("second claim took %s, want PAY-002 (the oldest left)", next.Message.IdempotencyKey)
	}
}

// The lease is live up to and including LockedUntilUtc, and claimable 1 ms later.
func testClaimBoundary(t *testing.T, b Backend) {
	db := seeded(t, b, 1)
	a, bc := Connect(t, db), Connect(t, db)
	ctx := context.Background()
	until := t0.Add(500 * time.Millisecond)
	mustClaim(t, a, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: until})
	res, err := bc.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: until, Until: until.Add(500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != engine.ClaimBlocked || res.PrevOwner != "Worker-A" || !res.PrevUntil.Equal(until) || res.Blocker != "PAY-001" {
		t.Fatalf("claim at exactly LockedUntilUtc = %+v, want blocked by Worker-A's PAY-001", res)
	}
	// Less than a millisecond later is still the same millisecond: still live.
	if res, _ := bc.Claim(ctx, claimAt("Worker-B", until.Add(999*time.Microsecond), time.Second)); res.Outcome != engine.ClaimBlocked {
		t.Fatalf("claim 0.999 ms after LockedUntilUtc = %v, want blocked (times are kept to the millisecond)", res.Outcome)
	}
	res = mustClaim(t, bc, engine.ClaimRequest{Worker: "Worker-B", Now: until.Add(time.Millisecond), Until: until.Add(501 * time.Millisecond)})
	if res.PrevOwner != "Worker-A" || !res.PrevUntil.Equal(until) || res.Message.LeaseVersion != 2 {
		t.Fatalf("claim 1 ms after LockedUntilUtc = %+v, want a reclaim from Worker-A at v2", res)
	}
	if r := RowByKey(t, db, "PAY-001"); r.LockedBy != "Worker-B" || r.Attempts != 2 {
		t.Fatalf("row after the reclaim = %+v, want Worker-B's, 2 attempts", r)
	}
}

func testKeyedClaim(t *testing.T, b Backend) {
	db := seeded(t, b, 2)
	a, bc := Connect(t, db), Connect(t, db)
	ctx := context.Background()
	won := mustClaim(t, a, engine.ClaimRequest{Worker: "Worker-A", Now: t0, Until: t0.Add(time.Second), Key: "PAY-002"})
	if won.Message.IdempotencyKey != "PAY-002" {
		t.Fatalf("keyed claim took %s", won.Message.IdempotencyKey)
	}
	if res, _ := bc.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: t0, Until: t0.Add(time.Second), Key: "PAY-002"}); res.Outcome != engine.ClaimBlocked || res.PrevOwner != "Worker-A" {
		t.Fatalf("second keyed claim = %+v, want blocked by Worker-A", res)
	}
	fin, err := a.Finalize(ctx, paid("Worker-A", won.Message))
	if err != nil || !fin.Committed {
		t.Fatalf("finalize: %+v %v", fin, err)
	}
	if res, _ := bc.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: t0, Until: t0.Add(time.Second), Key: "PAY-002"}); res.Outcome != engine.ClaimEmpty {
		t.Fatalf("claim of a Processed message = %v, want empty", res.Outcome)
	}
	if _, err := bc.Claim(ctx, engine.ClaimRequest{Worker: "Worker-B", Now: t0, Until: t0, Key: "PAY-999"}); err == nil {
		t.Fatal("claim of an unknown key: want an error")
	}
}

// With every row under a live lease a claim is blocked by the lease that ends first; with every
// row finished it is empty.
func testEmptyAndBlocked(t *testing.T, b Backend) {
	db := seeded(t, b, 2)
	a := Connect(t, db)
	ctx := context.Background()
	first := mustClaim(t, a, claimAt("Worker-A", t0, 2*time.Second))
	second := mustClaim(t, a, claimAt("Worker-A", t0, time.Second))
	res, err := a.Claim(ctx, claimAt("Worker-B", t0, time.Second))
	if err != nil || res.Outcome != engine.ClaimBlocked || res.Blocker != "PAY-002" || !res.PrevUntil.Equal(t0.Add(time.Second)) {
		t.Fatalf("claim with all rows leased = %+v, %v; want blocked by PAY-002 (its lease ends first)", res, err)
	}
	for _, m := range []engine.Message{first.Message, second.Message} {
		if fin, err := a.Finalize(ctx, paid("Worker-A", m)); err != nil || !fin.Committed {
			t.Fatalf("finalize %s: %+v %v", m.IdempotencyKey, fin, err)
		}
	}
	if res, err := a.Claim(ctx, claimAt("Worker-B", t0.Add(time.Hour), time.Second)); err != nil || res.Outcome != engine.ClaimEmpty {
		t.Fatalf("claim with all rows finished = %+v, %v; want empty", res, err)
	}
}

// Two connections race for one message: exactly one claim wins, the other is blocked (a lost
// race is an outcome, never an error).
func testRaceOneClaim(t *testing.T, b Backend) {
	for round := 0; round < 20; round++ {
		db := seeded(t, b, 1)
		conns := []engine.Conn{Connect(t, db), Connect(t, db)}
		results := make([]engine.ClaimResult, 2)
		errs := AtOnce(2, nil, func(i int) (err error) {
			results[i], err = conns[i].Claim(context.Background(), claimAt([]string{"Worker-A", "Worker-B"}[i], t0, time.Second))
			return err
		})
		won := 0
		for i := range results {
			if errs[i] != nil {
				t.Fatalf("round %d: %v", round, errs[i])
			}
			if results[i].Outcome == engine.ClaimWon {
				won++
			} else if r := results[i]; r.Outcome == engine.ClaimBlocked && (r.PrevOwner == "" || r.PrevUntil.IsZero()) {
				t.Fatalf("round %d: loser blocked by an owner it cannot name: %+v", round, r)
			} else if r.Outcome != engine.ClaimBlocked && r.Outcome != engine.ClaimLost {
				t.Fatalf("round %d: loser outcome = %v, want blocked (by the winner's lease) or lost (the race)", round, r.Outcome)
			}
		}
		if r := RowByKey(t, db, "PAY-001"); won != 1 || r.Attempts != 1 || r.LeaseVersion != 1 {
			t.Fatalf("round %d: %d claims won, row %+v; want exactly 1 claim", round, won, r)
		}
	}
}

// A cancelled context stops a call before it changes anything; the connection still works.
func testCancelled(t *testing.T, b Backend) {
	db := seeded(t, b, 1)
	a := Connect(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := a.Claim(ctx, claimAt("Worker-A", t0, time.Second)); err == nil {
		t.Fatalf("claim with a cancelled context = %+v, want an error", res)
	}
	if r := RowByKey(t, db, "PAY-001"); r.Status != engine.StatusPending || r.Attempts != 0 {
		t.Fatalf("row after a cancelled claim = %+v, want untouched", r)
	}
	mustClaim(t, a, claimAt("Worker-A", t0, time.Second))
}
