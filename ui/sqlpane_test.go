package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"leaselab/engine"
)

// toRejectedFinalize steps stale-owner until the paused owner's finalize has been rejected.
func toRejectedFinalize(t *testing.T, l *lab) {
	t.Helper()
	for i := 0; i < 40; i++ {
		if evs := l.m.frame.Events; len(evs) > 0 {
			if e := evs[len(evs)-1]; e.Kind == engine.EvFinalize && e.Outcome == engine.OutcomeRejected {
				return
			}
		}
		stepAnswering(l, true) // stale-owner asks questions before its steps: answered right
	}
	t.Fatal("stale-owner never rejected a finalize")
}

// TestSQLPaneGolden: v shows the statements of the last action, the stale owner's finalize: the
// guarded UPDATE with Worker-A bound changed 0 rows, and the transaction rolled back.
func TestSQLPaneGolden(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			l := newLab(t, "stale-owner", w, h, engine.Overrides{})
			toRejectedFinalize(t, l)
			l.press("v")
			v := l.view()
			checkSize(t, v, w, h)
			flat := strings.Join(strings.Fields(v), " ")
			for _, want := range []string{"Worker-A finalize of PAY-001 REJECTED", "LockedBy = 'Worker-A'", "→ 0 rows",
				"→ ROLLBACK (the payment update is undone too)", "SQL: each statement as the database ran it"} {
				if !strings.Contains(flat, want) {
					t.Errorf("SQL pane lacks %q:\n%s", want, v)
				}
			}
			golden.RequireEqual(t, []byte(v))
		})
	}
}

// TestSQLPaneScrollsBackToEarlierActions: the pane's own scrolling reaches the first action's
// claim (even though the outbox has nothing to scroll), end follows the last action again, and
// esc and v close it.
func TestSQLPaneScrollsBackToEarlierActions(t *testing.T) {
	l := newLab(t, "stale-owner", 80, 24, engine.Overrides{})
	toRejectedFinalize(t, l)
	l.script(
		keyStep{keys: []string{"v"}, not: []string{"Worker-A claimed PAY-001"}},
		keyStep{keys: []string{"home"}, want: []string{"Worker-A claimed PAY-001", "scrolled back", "LockedBy = 'Worker-A'"}},
		keyStep{keys: []string{"down", "pgdown"}, want: []string{"scrolled back"}},
		keyStep{keys: []string{"end"}, not: []string{"scrolled back"}},
		// The lab again: the table (at 80×24 without its title).
		keyStep{keys: []string{"esc"}, want: []string{"LockedUntilUtc"}, not: []string{"SQL: each statement"}},
		keyStep{keys: []string{"v"}, want: []string{"SQL: each statement"}},
		keyStep{keys: []string{"v"}, not: []string{"SQL: each statement"}},
	)
}

// TestSQLPaneBeforeAnyAction says what to do.
func TestSQLPaneBeforeAnyAction(t *testing.T) {
	l := newLab(t, "stale-owner", 80, 24, engine.Overrides{})
	l.press("v")
	l.must("No action has run SQL yet: step a worker (space).")
}

// TestTranscriptKeyWritesTheSession: w writes the session so far as Markdown into the
// transcript folder, 0600, and the status line says where.
func TestTranscriptKeyWritesTheSession(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	dir := t.TempDir()
	l.m.cfg.TranscriptDir = dir
	toRejectedFinalize(t, l)
	l.press("w")
	matches, _ := filepath.Glob(filepath.Join(dir, "leaselab-stale-owner-*.md"))
	if len(matches) != 1 {
		t.Fatalf("transcripts: %v", matches)
	}
	l.must("transcript written: " + matches[0])
	st, err := os.Stat(matches[0])
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", st, err)
	}
	data, _ := os.ReadFile(matches[0])
	for _, want := range []string{"# leaselab transcript: stale-owner", "Worker-A finalize of PAY-001 REJECTED",
		"→ ROLLBACK (the payment update is undone too)", "*The outbox table after this:*", "## Verdict"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	l.press("w") // a second one never overwrites the first
	if matches, _ = filepath.Glob(filepath.Join(dir, "leaselab-stale-owner-*.md")); len(matches) != 2 {
		t.Fatalf("after a second w: %v", matches)
	}
}

// TestServedLabWritesNoFileUnlessAllowed: a lab on a server writes no handout to the server's
// disk unless the teacher gave a folder, then at most its quota there, and never shows the
// server's path.
func TestServedLabWritesNoFileUnlessAllowed(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	cwd, _ := os.Getwd()
	before, _ := filepath.Glob(filepath.Join(cwd, "leaselab-*.md"))
	l.m.cfg.Served = true
	l.press("n", "w")
	l.must("this lab runs on a server, which keeps no files of yours")
	if after, _ := filepath.Glob(filepath.Join(cwd, "leaselab-*.md")); len(after) != len(before) {
		t.Fatalf("a served lab wrote %v", after)
	}
	dir := t.TempDir()
	l.m.cfg.Handouts = &HandoutQuota{Dir: dir, PerLab: 2}
	l.press("w", "w", "w")
	matches, _ := filepath.Glob(filepath.Join(dir, "leaselab-stale-owner-*.md"))
	if len(matches) != 2 {
		t.Fatalf("handouts written with a quota of 2: %v", matches)
	}
	l.must("this lab has written its 2 handouts")
	l.press("w")
	l.mustNot(dir)
}

// TestTranscriptHasTheQuestions: the handout has each question where it was asked, the answer
// given and the right one, and the score; an answer whose step was stepped back past is not in
// it.
func TestTranscriptHasTheQuestions(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	dir := t.TempDir()
	l.m.cfg.TranscriptDir = dir
	var asked []string
	for i := 0; i < 40 && len(asked) < 2; i++ {
		if q := l.m.ask.Open; q != nil {
			asked = append(asked, q.Text)
			pick := l.m.ask.Open.Right
			if len(asked) == 2 {
				pick = (pick + 1) % len(q.Answers) // the second answered wrong
			}
			l.press(string(rune('A' + pick)))
			continue
		}
		l.press("n")
	}
	if len(asked) < 2 {
		t.Fatalf("stale-owner asked %d questions in 40 steps", len(asked))
	}
	l.press("w")
	matches, _ := filepath.Glob(filepath.Join(dir, "leaselab-stale-owner-*.md"))
	if len(matches) != 1 {
		t.Fatalf("transcripts: %v", matches)
	}
	first := matches[0]
	data, _ := os.ReadFile(first)
	md := string(data)
	for _, want := range []string{"> **Question:** " + asked[0], "> **Question:** " + asked[1], " — *answered, right*",
		" — *answered*", " — *the right answer*", "## Questions\n\n1 of 2 answered right"} {
		if !strings.Contains(md, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	// Back past the second question's step: its answer no longer counts, nor is it written.
	for i := 0; i < 40 && l.m.ask.Score(l.m.track.Line) != "questions 1/1 right"; i++ {
		l.press("b")
	}
	l.press("w")
	matches, _ = filepath.Glob(filepath.Join(dir, "leaselab-stale-owner-*.md"))
	if len(matches) != 2 {
		t.Fatalf("transcripts after a second w: %v", matches)
	}
	second := matches[0]
	if second == first {
		second = matches[1]
	}
	data, _ = os.ReadFile(second)
	if md := string(data); strings.Contains(md, asked[1]) || !strings.Contains(md, "1 of 1 answered right") {
		t.Errorf("after stepping back past the second question, the transcript still has it, or not the first alone")
	}
}
