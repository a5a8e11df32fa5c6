package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"leaselab/assets"
	"leaselab/engine"
)

// TestChecksAgreeWithTheEvents plays every lesson with every toggle flipped before each of its
// script steps (the family of paths a room takes: issue 28's `after` with the atomic claim off
// reported "reclaimed by nobody yet" beside the events of Worker-B taking PAY-001 over), runs
// it to its end, and checks that no check, count or verdict says what the events contradict
// (engine.Disagreements). Long lessons (more than maxFlipSteps steps, or hundreds of messages)
// are flipped before their first step and their middle one only.
func TestChecksAgreeWithTheEvents(t *testing.T) {
	skipSweepUnderRace(t)
	const maxFlipSteps = 12
	for _, name := range assets.Names() {
		sc := loadScenario(t, name, "")
		if sc.Backend != "" {
			continue // PostgreSQL's lesson: its own tests run it on a server
		}
		toggles := engine.ToggleNames()
		if sc.Teaches != "" && !slices.Contains(toggles, sc.Teaches) {
			toggles = append(toggles, sc.Teaches)
		}
		at := []int{0}
		switch n := len(sc.Steps); {
		case n <= maxFlipSteps && sc.Messages <= 24:
			for k := 1; k < n; k++ {
				at = append(at, k)
			}
		case n > 1:
			at = append(at, n/2)
		}
		for _, tg := range toggles {
			for _, k := range at {
				if k > 0 && watchdogFlip[name+"/"+tg] || name == "many-workers" && tg != engine.ToggleLeasing && tg != engine.ToggleAtomicClaim {
					continue // a run to the watchdog, or 500 messages: once is enough (2 to 6 s each)
				}
				t.Run(fmt.Sprintf("%s/%s-flipped-before-step-%d", name, tg, k), func(t *testing.T) {
					agreeAfterFlip(t, name, tg, k)
				})
			}
		}
	}
}

// watchdogFlip are the flips whose runs go on until the watchdog ends them (a poison message
// retried for ever).
var watchdogFlip = map[string]bool{"dead-letter/" + engine.ToggleDeadLetter: true, "dead-letter/" + engine.ToggleLeasing: true}

func agreeAfterFlip(t *testing.T, name, toggle string, at int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := sessionOn(t, "sqlite", loadScenario(t, name, ""))
	for !s.Script().Done() {
		if _, pc, _ := s.Script().Position(); pc == at {
			on, _ := s.Settings().Get(toggle)
			if _, err := s.Crew().SetToggle(toggle, !on); err != nil && !errors.Is(err, engine.ErrNotNow) {
				t.Fatal(err)
			}
			at = -1
		}
		acted, err := s.Script().Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !acted && !s.Script().Done() {
			_, pc, _ := s.Script().Position()
			t.Fatalf("the script stopped at step %d", pc)
		}
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range engine.Disagreements(sum, s.Ledger().Events(), s.Ledger().EventsDropped() == 0) {
		t.Error(d)
	}
}
