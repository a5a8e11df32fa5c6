package engine_test

import (
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/engine/words"
)

// lessonRun is a built-in lesson run to its end with toggles set.
func lessonRun(t *testing.T, name string, toggles map[string]bool) *engine.Summary {
	t.Helper()
	sc := loadScenario(t, name, "")
	if err := sc.Apply(engine.Overrides{Toggles: toggles}); err != nil {
		t.Fatal(err)
	}
	_, sum := runToEnd(t, sc)
	return sum
}

func checkOf(t *testing.T, sum *engine.Summary, id string) engine.Check {
	t.Helper()
	for _, c := range sum.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s in %+v", id, sum.Checks)
	return engine.Check{}
}

// A message processed again because its owner crashed or stalled past its lease is counted
// apart from one processed by two owners at once, and only the second fails a verdict that
// does not name processed-once.
func TestAtLeastOnceIsNotADoubleOwner(t *testing.T) {
	off := func(name string) map[string]bool { return map[string]bool{name: false} }
	cases := []struct {
		lesson          string
		toggles         map[string]bool
		again, twoOwner int
		passed          bool
		same            int // processed again by the same worker
	}{
		{"before", nil, 0, 6, false, 0},                                              // no lease: every message twice, at once
		{"naive-claim", off(engine.ToggleAtomicClaim), 0, 1, false, 0},               // B's take overwrote A's live lease
		{"stale-owner", nil, 1, 0, true, 0},                                          // A stalled past its lease; its write was rejected
		{"stale-owner", off(engine.ToggleOwnershipCheck), 0, 1, false, 0},            // A's stale write landed: written twice
		{"aba-fencing", nil, 1, 0, true, 0},                                          // fencing rejected the stale attempt
		{"aba-fencing", off(engine.ToggleFencing), 0, 1, false, 0},                   // the stale attempt wrote: a violation
		{"lease-too-short", off(engine.ToggleHeartbeat), 1, 0, false, 0},             // its lesson names processed-once
		{"after", nil, 0, 0, true, 0},                                                // nothing processed twice
		{"playground", map[string]bool{engine.ToggleLeasing: false}, 0, 6, false, 0}, // the workshop's step 1
		// The rescue set Worker-A's finished message back to Pending and Worker-A processed it
		// again under a new lease: one worker, one owner at a time (issue 28).
		{"rescuer-race", nil, 0, 0, false, 1},
	}
	for _, c := range cases {
		sum := lessonRun(t, c.lesson, c.toggles)
		if sum.ReprocessedAfterLostLease != c.again || sum.ProcessedByTwoOwners != c.twoOwner || sum.Passed != c.passed ||
			sum.ReprocessedBySameWorker != c.same ||
			sum.ReprocessedAfterLostLease+sum.ProcessedByTwoOwners+sum.ReprocessedBySameWorker != sum.ProcessedMoreThanOnce || !sum.ExpectationsMet {
			t.Errorf("%s %v: again %d, two owners %d (of %d), passed %v, met %v; want %d, %d, %v", c.lesson, c.toggles,
				sum.ReprocessedAfterLostLease, sum.ProcessedByTwoOwners, sum.ProcessedMoreThanOnce, sum.Passed, sum.ExpectationsMet,
				c.again, c.twoOwner, c.passed)
		}
		// rescuer-race's verdict names its own checks (verdict-checks), the one-owner check not.
		if one := checkOf(t, sum, engine.CheckOneOwner); one.OK != (c.twoOwner == 0) || one.Decides == (c.lesson == "rescuer-race") {
			t.Errorf("%s %v: one-owner check %+v", c.lesson, c.toggles, one)
		}
	}
}

// The crash the workshop's free run shows: after the provider call, before the finalize, with
// leasing on. The message is processed twice (at-least-once) and the verdict still passes; the
// report explains it; before still fails with its 12 attempts.
func TestCrashAfterTheProviderCallPasses(t *testing.T) {
	sc := loadScenario(t, "", "name: crash\nmessages: 2\nworkers: A B\nsteps:\n  A claim PAY-001\n  A check\n  A crash\n"+
		"  clock past-lease\n  run until-done\n")
	s, sum := runToEnd(t, sc)
	if sum.ProcessedMoreThanOnce != 1 || sum.ReprocessedAfterLostLease != 1 || sum.ProcessedByTwoOwners != 0 || !sum.Passed {
		t.Fatalf("again %d, two owners %d, passed %v: %+v", sum.ReprocessedAfterLostLease, sum.ProcessedByTwoOwners, sum.Passed, sum.Checks)
	}
	if len(sum.ReprocessedKeys) != 1 || sum.ReprocessedKeys[0] != "PAY-001" {
		t.Fatalf("re-processed keys %v, want PAY-001", sum.ReprocessedKeys)
	}
	po := checkOf(t, sum, engine.CheckProcessedOnce)
	if po.OK || po.Decides {
		t.Fatalf("processed-once should fail, outside the verdict: %+v", po)
	}
	rep, err := s.BuildReport(t.Context(), "", s.Clock().Now(), "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := words.WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"again after a lost lease (at-least-once)      1", "At-least-once: a worker crashed",
		"[PASS] each message had one owner at a time", "(not part of this lesson's verdict)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	before := lessonRun(t, "before", nil)
	if before.ProcessingAttempts != 12 || before.Passed {
		t.Fatalf("before: %d attempts, passed %v", before.ProcessingAttempts, before.Passed)
	}
}
