package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// askScenario writes a scenario file whose script holds lines, and returns the command line
// that runs it.
func askScenario(lines string) func(t *testing.T, dir string) ([]string, string) {
	return func(t *testing.T, dir string) ([]string, string) {
		f := filepath.Join(dir, "q.scenario")
		body := "name: q\nworkers: A B\nsteps:\n  A claim PAY-001\n" + lines
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{"run", f, "--report-dir", ""}, f
	}
}

// Questions in a scenario file: every bad one is a file:line error, exit 2, the file untouched.
func TestHostileQuestions(t *testing.T) {
	runHostile(t, "questions", []hostileCase{
		{name: "ask: with no right answer", setup: askScenario("  ask: Who? | A | B\n  B claim PAY-001\n"),
			code: 2, msg: "q.scenario:5: ask: which answer is right?", unchanged: true},
		{name: "ask: whose right answer is not an answer", setup: askScenario("  ask: Who? | A | B = C\n  B claim PAY-001\n"),
			code: 2, msg: "q.scenario:5: ask: the right answer \"C\" is not one of the answers (A, B)", unchanged: true},
		{name: "ask: with five answers", setup: askScenario("  ask: Who? | a | b | c | d | e = a\n  B claim PAY-001\n"),
			code: 2, msg: "q.scenario:5: ask: 5 answers, at most 4", unchanged: true},
		{name: "ask: with no step after it", setup: askScenario("  ask: Who? | A | B = A\n"),
			code: 2, msg: "q.scenario:5: ask: no step follows this question", unchanged: true},
		{name: "because: with no ask: before it", setup: askScenario("  because: why\n"),
			code: 2, msg: "q.scenario:5: because: comes right after an \"ask:\" line", unchanged: true},
		{name: "a good question is ignored by run", setup: askScenario("  ask: Who? | A | B = B\n  because: why.\n  run until-done\n"),
			code: 0, msg: "", unchanged: true},
	})
}
