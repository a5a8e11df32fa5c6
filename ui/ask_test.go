package ui

import (
	"strings"
	"testing"

	"leaselab/engine"
)

// stepToQuestion presses space until a question is open (or fails after n presses).
func stepToQuestion(t *testing.T, l *lab, n int) {
	t.Helper()
	for i := 0; i < n && l.m.ask.open == nil; i++ {
		l.press(" ")
	}
	if l.m.ask.open == nil {
		t.Fatalf("no question after %d steps:\n%s", n, l.view())
	}
}

// TestAskThenScore: stale-owner stops before Worker-B's claim with its question, the answer
// keys answer it, the step runs, and the lab says right or wrong and why; the score counts.
func TestAskThenScore(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	stepToQuestion(t, l, 10)
	l.must("PREDICT: Worker-A is paused, still holding PAY-001, and its lease has ended.",
		"A\u00a0blocked · B\u00a0reclaims\u00a0it · C\u00a0finds\u00a0nothing", "A–D answer")
	before := l.row("PAY-001")
	l.press(" ") // space again: the question stays, nothing runs
	if l.row("PAY-001") != before || l.m.ask.open == nil {
		t.Fatalf("space ran past the question:\n%s", l.view())
	}
	l.press("D") // this question has three answers
	l.must("this question has 3 answers: A B C")
	l.press("A") // wrong
	l.must("✗ not quite: you said blocked; it is reclaims it — Past LockedUntilUtc", "questions 0/1 right")
	if !strings.Contains(l.row("PAY-001"), "Worker-B") {
		t.Fatalf("the answer did not run the step:\n%s", l.view())
	}
	l.mustNot("A–D answer")
	stepToQuestion(t, l, 10)
	l.must("PREDICT: Worker-A wakes and finalizes PAY-001.", "A\u00a01 · B\u00a00")
	l.press("B")
	l.must("✓ right: 0 — WHERE LockedBy='Worker-A' matches nothing", "REJECTED", "questions 1/2 right")
}

// TestAnswerWithoutQuestion says what to do.
func TestAnswerWithoutQuestion(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	l.press("A")
	l.mustNot("right")
	if l.m.ask.asked != 0 {
		t.Fatal("an answer with no question counted")
	}
}

// TestRunToTheEndIgnoresQuestions: e runs every lesson to its verdict past its questions.
func TestRunToTheEndIgnoresQuestions(t *testing.T) {
	l := newLab(t, "after", 120, 40, engine.Overrides{})
	l.press("e")
	if l.m.finish.on || !l.m.frame.Done {
		t.Fatalf("e did not run to the end: %q", l.m.status.text)
	}
	l.must("VERDICT")
	l.mustNot("PREDICT")
}
