package scenario_test

import (
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/engine/scenario"
)

const askHead = "name: q\nworkers: A B\nsteps:\n"

func TestParseAsk(t *testing.T) {
	sc := mustParse(t, askHead+
		"  A claim PAY-001\n"+
		"  ask: Who owns PAY-001 after this step? | Worker-A | Worker-B | nobody = Worker-B   # a comment\n"+
		"  because: Worker-A's lease ran out, so Worker-B's claim took it over.\n"+
		"  B claim PAY-001\n"+
		"  ask: Does the finalize commit? | LockedBy=A | no = no\n"+
		"  A finalize\n")
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
		_, err := scenario.Parse("q.scenario", []byte(askHead+c.body))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q…", c.body, err, c.want)
		}
	}
}

// A question's "when" lines give its answer under other settings, or skip it; the first that
// holds decides, and "throughout" also needs the toggle so when the run began.
func TestAskAnswerRules(t *testing.T) {
	sc := mustParse(t, askHead+
		"  ask: Rows changed? | 1 | 0 = 0\n"+
		"  because: guarded.\n"+
		"  when leasing=off: skip: nothing was claimed\n"+
		"  when ownership-check=off: = 1\n"+
		"  because: unguarded.\n"+
		"  when fencing=on throughout: = 1\n"+
		"  A finalize\n")
	q := sc.Steps[0].Ask
	def := engine.DefaultSettings()
	with := func(name string, on bool) engine.Settings {
		s := def
		if err := s.Set(name, on); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		name         string
		now, initial engine.Settings
		right        int
		because      string
		skip         string
	}{
		{"as written", def, def, 1, "guarded.", ""},
		{"leasing off", with("leasing", false), def, -1, "", "nothing was claimed"},
		{"ownership off", with("ownership-check", false), def, 0, "unguarded.", ""},
		{"fencing on from the start", with("fencing", true), with("fencing", true), 0, "guarded.", ""},
		{"fencing on in mid-lesson", with("fencing", true), def, 1, "guarded.", ""},
	} {
		a := q.For(c.now, c.initial)
		if a.Right != c.right || a.Because != c.because || a.Skip != c.skip {
			t.Errorf("%s: %+v, want right %d because %q skip %q", c.name, a, c.right, c.because, c.skip)
		}
	}
	for _, c := range []struct{ body, want string }{
		{"  when leasing=off: = A\n  A claim\n", "q.scenario:4: when: a question's answer under other settings"},
		{"  ask: Who? | A | B = A\n  when leasing=off = B\n  A claim\n", "q.scenario:5: when: want"},
		{"  ask: Who? | A | B = A\n  when throughout: = B\n  A claim\n", "q.scenario:5: when: name at least one toggle"},
		{"  ask: Who? | A | B = A\n  when nosuch=off: = B\n  A claim\n", "q.scenario:5: when: unknown toggle"},
		{"  ask: Who? | A | B = A\n  when leasing=off: = C\n  A claim\n", "q.scenario:5: when: the right answer \"C\""},
		{"  ask: Who? | A | B = A\n  when leasing=off: skip:\n  A claim\n", "q.scenario:5: when … skip: say why"},
		{"  ask: Who? | A | B = A\n  when leasing=off: skip: no\n  because: x\n  A claim\n", "q.scenario:6: because: the when line 5 skips"},
	} {
		_, err := scenario.Parse("q.scenario", []byte(askHead+c.body))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q…", c.body, err, c.want)
		}
	}
}

// A question names what the engine reads from the run ("observe:") and which value makes each
// answer right ("if VALUE: ANSWER"), each with a why of its own.
func TestParseObserve(t *testing.T) {
	sc := mustParse(t, askHead+
		"  A claim PAY-001\n"+
		"  ask: What does Worker-B's claim get? | PAY-001 as well | blocked = blocked\n"+
		"  observe: claim by B\n"+
		"  if blocked: blocked\n"+
		"  because: A's lease holds it.\n"+
		"  if selected PAY-001: PAY-001 as well   # a comment\n"+
		"  when leasing=off: skip: no claims\n"+
		"  B claim\n"+
		"  ask: How many calls at the end? | 1 | 2 or more = 1\n"+
		"  observe: status checks of PAY-001 at the end\n"+
		"  if 1: 1\n"+
		"  if >= 2: 2 or more\n"+
		"  run\n")
	o := sc.Steps[1].Ask.Observe
	if o == nil || o.Text != "claim by B" || o.AtEnd || len(o.Ifs) != 2 || o.Ifs[0].Answer != 1 || o.Ifs[0].Because != "A's lease holds it." ||
		o.Ifs[1].Value != "selected PAY-001" || o.Ifs[1].Answer != 0 || o.Ifs[1].Because != "" || len(sc.Steps[1].Ask.Rules) != 1 {
		t.Fatalf("observation: %+v", o)
	}
	if o := sc.Steps[2].Ask.Observe; o == nil || !o.AtEnd || o.Ifs[1].Value != ">= 2" {
		t.Fatalf("observation at the end: %+v", o)
	}
}

func TestParseObserveErrors(t *testing.T) {
	const q = "  ask: Who? | A | B = A\n"
	for _, c := range []struct{ body, want string }{
		{"  observe: row PAY-001\n  A claim\n", "q.scenario:4: observe: comes after an \"ask:\" line"},
		{q + "  observe: the weather\n  A claim\n", "q.scenario:5: observe \"the weather\": want one of: claim by WORKER;"},
		{q + "  observe: status checks\n  A claim\n", "q.scenario:5: \"status checks\" is only known once the run is over"},
		{q + "  if 1: A\n  A claim\n", "q.scenario:5: if: the question of line 4 observes nothing yet"},
		{q + "  observe: row PAY-001\n  if Pending A\n  A claim\n", "q.scenario:6: if: want \"if VALUE: ANSWER\""},
		{q + "  observe: row PAY-001\n  if Gone: A\n  A claim\n", "q.scenario:6: if: \"row PAY-001\" reads one of: Pending,"},
		{q + "  observe: lease version of PAY-001\n  if many: A\n  A claim\n", "q.scenario:6: if: \"lease version of PAY-001\": want a count"},
		{q + "  observe: row PAY-001\n  if Pending: C\n  A claim\n", "q.scenario:6: if: \"C\" is not one of the answers (A, B)"},
		{q + "  observe: row PAY-001\n  if Pending: A\n  if Pending: B\n  A claim\n", "q.scenario:7: if: \"Pending\" already has its answer (line 6)"},
		{q + "  observe: row PAY-001\n  if Pending: B\n  A claim\n", "q.scenario:5: observe: no \"if VALUE: A\" line"},
		{q + "  observe: row PAY-001\n  if Pending: A\n  when leasing=off: = B\n  A claim\n", "q.scenario:7: when …: = ANSWER: the question observes"},
		{q + "  observe: row PAY-001\n  observe: row PAY-002\n  A claim\n", "q.scenario:6: observe: the question of line 4 already observes"},
		{q + "  observe: row PAY-001\n  if Pending: A\n  because: one\n  because: two\n  A claim\n", "q.scenario:8: because: belongs right after an if line"},
	} {
		_, err := scenario.Parse("q.scenario", []byte(askHead+c.body))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q…", c.body, err, c.want)
		}
	}
}
