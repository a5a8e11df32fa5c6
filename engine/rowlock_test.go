package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	. "leaselab/engine"
	"leaselab/engine/scenario"
)

// A lock step needs a database with row locks: on SQLite it is refused, and says why.
func TestLockStepNeedsRowLocks(t *testing.T) {
	sc, err := scenario.Parse("x.scenario", []byte("name: x\nmessages: 1\nworkers: A\nsteps:\n  A lock\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := session(t, sc)
	err = s.Script().RunToEnd(context.Background())
	if !errors.Is(err, ErrNotNow) || !strings.Contains(err.Error(), "no row locks") {
		t.Fatalf("lock on SQLite: %v", err)
	}
	if !strings.Contains(err.Error(), "x.scenario:5") {
		t.Fatalf("the error does not name the script line: %v", err)
	}
}

// The words of a claim that waited for a row lock, each way it can end.
func TestLockWaitSentences(t *testing.T) {
	base := Event{Kind: EvClaim, Worker: "Worker-B", ID: "Worker-B", Wait: 301 * time.Millisecond, Holder: "Worker-A", WaitedFor: "PAY-001"}
	gaveUp := base
	gaveUp.Outcome, gaveUp.Key = OutcomeBlocked, "PAY-001"
	won := base
	won.Outcome, won.Key, won.Until = OutcomeWon, "PAY-002", Epoch.Add(time.Second)
	for _, c := range []struct {
		e    Event
		want string
	}{
		{gaveUp, "Worker-B claim WAITED 301ms for the row lock on PAY-001, held by Worker-A's open transaction, and gave up (lock_timeout): BLOCKED"},
		{won, "Worker-B claimed PAY-002, lease until 09:00:01.000Z — after it WAITED 301ms for the row lock on PAY-001, held by Worker-A's open transaction"},
		{Event{Kind: EvLock, Worker: "Worker-A", Key: "PAY-001", Outcome: OutcomeLocked, SkipLocked: true}, "Worker-A locked PAY-001 (BEGIN; SELECT … FOR UPDATE SKIP LOCKED): its transaction stays open"},
		{Event{Kind: EvCrash, Worker: "Worker-A", Key: "PAY-001", Outcome: OutcomeLockReleased}, "the row lock on PAY-001 is released"},
	} {
		if got := Sentence(c.e); !strings.Contains(got, c.want) {
			t.Errorf("Sentence = %q\nwant it to contain %q", got, c.want)
		}
	}
}
