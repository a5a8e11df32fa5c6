package ui

import (
	"strings"
	"testing"

	"leaselab/engine"
)

// The lessons on stage (issue 9): a toggle experiment is a lesson, at-least-once is not a
// duplicate, and after's concurrent phase runs free.

// The workshop's step 1 (leaselab, l, p): with leasing off the playground expects its failure,
// so the run ends "as expected", and while it runs the lab says what it expects.
func TestPlaygroundExpectsEachToggle(t *testing.T) {
	for _, c := range []struct{ keys, when, verdict string }{
		{"l", "leasing=off", "VERDICT: FAIL"},
		{"a", "atomic-claim=off", "VERDICT: FAIL"},
		{"o", "", "VERDICT: PASS"},
	} {
		l := newLab(t, "playground", 120, 40, engine.Overrides{})
		l.press(c.keys)
		if c.when != "" {
			l.must("expected with " + c.when + ": processed_by_two_owners > 0, verdict = fail")
			l.mustNot("expected: verdict = pass")
		}
		stepToEnd(t, l)
		l.must(c.verdict)
		l.mustNot("✗ not as expected")
		if c.when != "" {
			l.must("✓ as expected with "+c.when, "the failure is the lesson")
		}
	}
}

// The free run's crash after the provider call and before the finalize, with leasing on: the
// message is processed again once the lease has ended (at-least-once), which the ledgers count
// apart from duplicates, and the verdict passes.
func TestAtLeastOnceIsNotADuplicateInTheLab(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("n", "n", "n") // A claims PAY-001, B claims PAY-002, A calls the provider for PAY-001
	l.must("Worker-A processed PAY-001")
	l.press("x") // Worker-A is selected: it crashes holding PAY-001
	l.press("f", "r")
	stepToEnd(t, l)
	l.press("home") // the verdict leaves room for part of the table: PAY-001's row is its first
	l.must("VERDICT: PASS", "duplicated messages 0", "re-processed 1 (at-least-once)",
		"○ fail each message processed exactly once", "↻ A A ×2")
	l.mustNot("!! duplicated", "!! A", "✗ FAIL", "✗ not as expected")
}

// after's concurrent phase runs free on goroutines in the lab too, as its heading says: one
// press runs the whole phase, both workers take part, and the timeline ends it with the split.
func TestAfterConcurrentPhaseRunsFreeInTheLab(t *testing.T) {
	l := newLab(t, "after", 120, 40, engine.Overrides{})
	for i := 0; i < 5; i++ {
		stepOrAnswer(l) // phase, A claim, A crash (after its question), A restart, the concurrent phase's heading
	}
	l.must("Concurrent phase: both workers free on goroutines")
	before := l.m.frame.EventCount
	l.press("n")
	processed := 0
	for _, r := range l.m.frame.Rows {
		if r.Status == engine.StatusProcessed {
			processed++
		}
	}
	if processed != 5 || !strings.Contains(l.m.status.Text, "concurrent phase done: Worker-A ") {
		t.Fatalf("after one press: %d processed; status %q", processed, l.m.status.Text)
	}
	byWorker := map[string]int{}
	for _, e := range l.m.frame.Events[len(l.m.frame.Events)-(l.m.frame.EventCount-before):] {
		if e.Kind == engine.EvCheck {
			byWorker[e.Worker]++
		}
	}
	if byWorker["Worker-A"]+byWorker["Worker-B"] != 5 {
		t.Fatalf("provider calls in the phase: %v", byWorker)
	}
	t.Logf("the lab's concurrent phase: %v", byWorker)
}

// The workshop's step 1 literally (leaselab, l, space, space, p): no red "not as expected", and
// no "expected: verdict = pass" under LEASING OFF while it plays.
func TestWorkshopStepOneIsALesson(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("l", " ", " ")
	l.must("LEASING OFF", "expected with leasing=off: processed_by_two_owners > 0, verdict = fail")
	l.mustNot("expected: verdict = pass")
	l.press("p")
	l.tickAll(1000)
	l.must("VERDICT: FAIL", "✓ as expected with leasing=off: 2 of 2 met", "the failure is the lesson")
	l.mustNot("✗ not as expected", "expected verdict = pass")
}
