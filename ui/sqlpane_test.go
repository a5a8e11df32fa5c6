package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
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
	l.press("v")
	l.mustNot("Worker-A claimed PAY-001")
	l.press("home")
	l.must("Worker-A claimed PAY-001", "scrolled back", "LockedBy = 'Worker-A'")
	l.press("down", "pgdown")
	l.must("scrolled back")
	l.press("end")
	l.mustNot("scrolled back")
	l.send(tea.KeyMsg{Type: tea.KeyEsc})
	l.mustNot("SQL: each statement")
	l.must("LockedUntilUtc") // the lab again: the table (at 80×24 without its title)
	l.press("v")
	l.must("SQL: each statement")
	l.press("v")
	l.mustNot("SQL: each statement")
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

// TestWrapSpacesKeepsValuesWhole: a statement wraps at spaces, never inside a bound value.
func TestWrapSpacesKeepsValuesWhole(t *testing.T) {
	got := wrapSpaces("SET LockedUntilUtc = '2026-01-15T09:00:00.500Z'  → 1 row", 30)
	want := []string{"SET LockedUntilUtc =", "'2026-01-15T09:00:00.500Z'  →", "1 row"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := wrapSpaces("abcdefghij", 4); strings.Join(got, "|") != "abcd|efgh|ij" {
		t.Fatalf("long word: %q", got)
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
