package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
)

// stepToQuestion presses space until a question is open (or fails after n presses).
func stepToQuestion(t *testing.T, l *lab, n int) {
	t.Helper()
	for i := 0; i < n && l.m.ask.Open == nil; i++ {
		l.press(" ")
	}
	if l.m.ask.Open == nil {
		t.Fatalf("no question after %d steps:\n%s", n, l.view())
	}
}

// TestAskThenScore: stale-owner stops before Worker-B's claim with its question, the answer
// keys answer it, the step runs, and the lab says right or wrong and why; the score counts.
func TestAskThenScore(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	stepToQuestion(t, l, 10)
	l.must("PREDICT: Worker-A is paused, still holding PAY-001, and its lease has ended.",
		"A\u00a0blocked · B\u00a0reclaims\u00a0it · C\u00a0finds\u00a0nothing", "A B C answer")
	before := l.row("PAY-001")
	l.press(" ") // space again: the question stays, nothing runs
	if l.row("PAY-001") != before || l.m.ask.Open == nil {
		t.Fatalf("space ran past the question:\n%s", l.view())
	}
	l.press("D") // this question has three answers
	l.must("this question has 3 answers: A B C")
	l.press("A") // wrong
	l.must("✗ not quite: you said blocked; it is reclaims it — Past LockedUntilUtc", "questions 0/1 right")
	if !strings.Contains(l.row("PAY-001"), "Worker-B") {
		t.Fatalf("the answer did not run the step:\n%s", l.view())
	}
	l.mustNot("A B C answer")
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
	if asked, _, _ := l.m.ask.Counted(l.m.track.Line); asked != 0 {
		t.Fatal("an answer with no question counted")
	}
}

// TestRunToTheEndIgnoresQuestions: e runs every lesson to its verdict past its questions.
func TestRunToTheEndIgnoresQuestions(t *testing.T) {
	l := newLab(t, "after", 120, 40, engine.Overrides{})
	l.press("e")
	if l.m.finish.on || !l.m.frame.Done {
		t.Fatalf("e did not run to the end: %q", l.m.status.Text)
	}
	l.must("VERDICT")
	l.mustNot("PREDICT")
}

// The answer marked right is what the step will do under the settings now: stale-owner with
// the ownership check off writes (1 row), and the lab says so, with the setting.
func TestAnswerFollowsTheSettings(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	l.press("o") // ownership check off, before the first action
	stepToQuestion(t, l, 10)
	l.press("B") // reclaims it
	stepToQuestion(t, l, 10)
	l.must("PREDICT: Worker-A wakes and finalizes PAY-001.", "A\u00a01 · B\u00a00")
	l.press("A")
	l.must("✓ right: 1 — Without the ownership check", "OWNERSHIP VIOLATION", "questions 2/2 right")
	l.mustNot("not quite")
}

// A question that does not apply under the settings now is not asked: the step runs and the
// status says why.
func TestQuestionSkippedUnderOtherSettings(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	l.press("l") // leasing off: nobody holds a lease
	for i := 0; i < 12; i++ {
		l.press(" ")
		if l.m.ask.Open != nil {
			t.Fatalf("a question that does not apply was asked:\n%s", l.view())
		}
		if strings.Contains(l.m.status.Text, "no question here") {
			l.must("no question here (with leasing=off): with leasing off nobody holds a lease")
			return
		}
	}
	t.Fatalf("no step said it skipped the question: %q", l.m.status.Text)
}

// While a question is open only its answer keys act, and they are capitals: b does not answer
// (it is step back's key) and a does not (the atomic claim's): each says so and waits with the
// other keys; space and other keys say what to do, and the question stays on screen; the
// footer names only the question's keys; ? shows the mode; esc skips the question.
func TestQuestionKeys(t *testing.T) {
	l := newLab(t, "stale-owner", 80, 24, engine.Overrides{})
	stepToQuestion(t, l, 10)
	pos := l.m.track.Line.Pos
	question := "PREDICT: Worker-A is paused, still holding PAY-001, and its lease has ended."
	for _, k := range []string{" ", "n", "x", "R", "tab", "+", "1", "b", "a"} {
		l.press(k)
		if l.m.ask.Open == nil || l.m.track.Line.Pos != pos {
			t.Fatalf("%q acted while the question was open:\n%s", k, l.view())
		}
		if !strings.Contains(l.m.status.Text, "answer first (A B C), or esc to skip the question") {
			t.Fatalf("%q said %q", k, l.m.status.Text)
		}
		l.must(question, "C\u00a0finds\u00a0nothing") // a stray key leaves the question and its answers
	}
	l.must("a is not an answer (answers are capitals)") // the last: the atomic claim's key waits too
	l.must("A B C answer · esc skip the question · ? keys")
	l.mustNot("b back", "a atomic", "space step")
	l.press("d")
	l.must("d is not an answer (answers are capitals)")
	l.press("D")
	l.must("this question has 3 answers: A B C")
	l.press("?")
	l.must("QUESTION", "A B C answer it", "esc skip it: the step runs, unscored", question)
	l.send(tea.KeyMsg{Type: tea.KeyEsc}) // closes ?, the question stays
	if l.m.showHelp || l.m.ask.Open == nil {
		t.Fatalf("esc should close ? first")
	}
	atomic := l.m.frame.Settings.AtomicClaim
	l.press("B")
	if l.m.track.Line.Pos != pos+1 || !strings.Contains(l.m.status.Text, "✓ right: reclaims it") {
		t.Fatalf("B should answer B: pos %d→%d, %q", pos, l.m.track.Line.Pos, l.m.status.Text)
	}
	stepToQuestion(t, l, 10)
	l.press("A")
	if l.m.frame.Settings.AtomicClaim != atomic || !strings.Contains(l.m.status.Text, "✗ not quite: you said 1; it is 0") {
		t.Fatalf("A should answer A: atomic %v→%v, %q", atomic, l.m.frame.Settings.AtomicClaim, l.m.status.Text)
	}
	l.must("questions 1/2 right")
}

// esc skips a question: the step runs, and the score does not count it.
func TestQuestionSkippedWithEsc(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	stepToQuestion(t, l, 10)
	l.send(tea.KeyMsg{Type: tea.KeyEsc})
	if l.m.ask.Open != nil || !strings.Contains(l.row("PAY-001"), "Worker-B") {
		t.Fatalf("esc did not run the step:\n%s", l.view())
	}
	l.must("question skipped")
	l.mustNot("questions 0/1", "questions 1/1")
}

// Answers from a future that b dropped no longer count: answer, step back before the question,
// answer again: one answer counts, the last.
func TestScoreForgetsADroppedFuture(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	stepToQuestion(t, l, 10)
	l.press("B") // right
	l.must("questions 1/1 right")
	l.press("b") // back before the question's step: its answer no longer stands
	l.mustNot("questions 1/1 right")
	stepToQuestion(t, l, 3)
	l.press("A") // wrong, this time
	l.must("questions 0/1 right")
	l.mustNot("questions 1/2", "questions 0/2")
	l.press("b", "x") // back, and a new future (a crash): the answer's step is dropped
	l.mustNot("questions 0/1 right")
}

// Keys that do nothing say why: an answer key with no question, { and } outside the diagram.
func TestIdleKeysSayWhy(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	for k, want := range map[string]string{
		"A": "no question is open: A–D answer a question when the lab asks one",
		"C": "no question is open",
		"{": "{ and } scroll the diagram: t shows it first",
		"}": "{ and } scroll the diagram: t shows it first",
	} {
		l.m.status = common.Status{}
		l.press(k)
		if !strings.Contains(l.m.status.Text, want) {
			t.Errorf("%q said %q, want %q", k, l.m.status.Text, want)
		}
	}
	l.press("?")
	l.must("u skip-locked: a PostgreSQL lesson")
}
