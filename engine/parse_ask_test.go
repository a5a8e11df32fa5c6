package engine_test

import (
	"strings"
	"testing"

	"leaselab/engine"
)

const askHead = "name: q\nworkers: A B\nsteps:\n"

func TestParseAsk(t *testing.T) {
	sc, err := engine.Parse("q.scenario", []byte(askHead+
		"  A claim PAY-001\n"+
		"  ask: Who owns PAY-001 after this step? | Worker-A | Worker-B | nobody = Worker-B   # a comment\n"+
		"  because: Worker-A's lease ran out, so Worker-B's claim took it over.\n"+
		"  B claim PAY-001\n"+
		"  ask: Does the finalize commit? | LockedBy=A | no = no\n"+
		"  A finalize\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Steps) != 3 || sc.Questions() != 2 {
		t.Fatalf("%d steps, %d questions; want 3 and 2", len(sc.Steps), sc.Questions())
	}
	q := sc.Steps[1].Ask
	if q == nil || q.Line != 5 || q.Text != "Who owns PAY-001 after this step?" || strings.Join(q.Answers, ",") != "Worker-A,Worker-B,nobody" ||
		q.Right != 1 || !strings.HasPrefix(q.Because, "Worker-A's lease ran out") {
		t.Fatalf("question: %+v", q)
	}
	if sc.Steps[1].Key != "PAY-001" || sc.Steps[1].Worker != "B" || sc.Steps[0].Ask != nil {
		t.Fatalf("the question went to the wrong step: %+v", sc.Steps)
	}
	if q := sc.Steps[2].Ask; q.Right != 1 || q.Because != "" || q.Answers[0] != "LockedBy=A" {
		t.Fatalf("second question: %+v", q)
	}
}

func TestParseAskErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"  ask: Who? | A | B\n  A claim\n", "q.scenario:4: ask: which answer is right?"},
		{"  ask: Who? | A = A\n  A claim\n", "q.scenario:4: ask: 1 answer(s)"},
		{"  ask: | A | B = A\n  A claim\n", "q.scenario:4: ask: no question"},
		{"  ask: Who? | A | B | C | D | E = A\n  A claim\n", "q.scenario:4: ask: 5 answers, at most 4"},
		{"  ask: Who? | A | | B = A\n  A claim\n", "q.scenario:4: ask: an empty answer"},
		{"  ask: Who? | A | a = A\n  A claim\n", "q.scenario:4: ask: answer \"a\" given twice"},
		{"  ask: Who? | A | B = C\n  A claim\n", "q.scenario:4: ask: the right answer \"C\" is not one of the answers (A, B)"},
		{"  A claim\n  because: why\n", "q.scenario:5: because: comes right after an \"ask:\" line"},
		{"  ask: Who? | A | B = A\n  because: one\n  because: two\n  A claim\n", "q.scenario:6: because: the question of line 4 already has one"},
		{"  ask: Who? | A | B = A\n  ask: And? | A | B = B\n  A claim\n", "q.scenario:5: ask: the question of line 4 has no step yet"},
		{"  A claim\n  ask: Who? | A | B = A\n", "q.scenario:5: ask: no step follows this question"},
		{"  ask: Who? | A | B = A\n  because:\n  A claim\n", "q.scenario:5: because: needs a sentence"},
		{"  ask: " + strings.Repeat("x", 201) + " | A | B = A\n  A claim\n", "q.scenario:4: ask: question too long (201 characters, at most 200)"},
	} {
		_, err := engine.Parse("q.scenario", []byte(askHead+c.body))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q…", c.body, err, c.want)
		}
	}
}
