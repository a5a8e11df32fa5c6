package engine_test

import (
	"context"
	"testing"
)

// A run until-done with high crash and pause rates ends with every message processed. Crashed
// owners keep their leases while the clock stands, so once the Pending rows are taken every claim
// is blocked; a round that found only that must move the clock to the leases' end. Before, the
// run brought the crashed and paused workers back instead, they were blocked again, a quarter of
// them crashed again, and the round never ended until the watchdog stopped the run ("the run
// made no progress": this seed at 300 messages).
func TestRunUntilDoneMovesTheClockAfterARoundOfBlockedClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 300 messages through 8 workers")
	}
	sc := loadScenario(t, "", `name: stall
title: stall
explain: a run with crashes and pauses while the clock stands
messages: 300
workers: 8
lease: 500ms
leasing: on
fencing: on
seed: 1
steps:
  run random until-done crash-rate=0.25 pause-rate=0.25
`)
	s := session(t, sc)
	ctx := context.Background()
	if err := s.Script().RunToEnd(ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Outbox.Processed != 300 || sum.Lost != 0 {
		t.Fatalf("after the run: %d of 300 Processed, %d lost", sum.Outbox.Processed, sum.Lost)
	}
}
