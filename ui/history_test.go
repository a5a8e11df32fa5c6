package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/store"
	"leaselab/ui/common"
	"leaselab/ui/history"
)

// screenBody is the screen the lab draws from its frame, without what says where in the history
// it stands and what the last key did: the timeline, the status note and the marks of what the
// last command changed. What is left is drawn from the frame alone.
func screenBody(m Model) string {
	m.status, m.track.Line = common.Status{}, history.Timeline{}
	m.workers = m.workers.WithSelected(0) // the user's selection, not the database's
	m.changes = common.NoChanges(m.frame)
	m.relayout()
	f := *m.frame
	sum := *f.Summary
	f.Summary = nil
	return m.View() + fmt.Sprintf("\n%+v\n%+v", f, sum)
}

// fileRows reads every outbox row from the database file itself, on a connection of its own
// (as sqlite3 would), not through the session.
func fileRows(t *testing.T, path string) string {
	t.Helper()
	ctx := context.Background()
	db, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%+v\n", r)
	}
	return b.String()
}

// labFile is the path of the database the test opener of l writes.
func labFile(t *testing.T, l *lab) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(l.m.sess.DB().(fixedPathDB).DB.Path()), "lab.db"))
	if len(files) != 1 {
		t.Fatalf("no lab.db: %v", files)
	}
	return files[0]
}

// TestStepBackThenForward steps stale-owner, with a crash and a clock move of the user's, and
// for every N goes back N steps (b) and forward again (]): the screen (but for the status note
// and the timeline) and the rows of the database file must be byte for byte what they were.
func TestStepBackThenForward(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	path := labFile(t, l)
	var screens, rows []string
	keep := func() {
		screens = append(screens, screenBody(l.m))
		rows = append(rows, fileRows(t, path))
	}
	keep()
	for _, k := range []string{" ", " ", " ", "+", " ", " ", " ", " ", " ", "2", "x", " ", " "} {
		if k == " " {
			stepOrAnswer(l)
		} else {
			l.press(k)
		}
		if k != "2" {
			keep()
		}
	}
	end := len(screens) - 1
	l.must(fmt.Sprintf("history step %d of %d", end, end))
	for n := 1; n <= end; n++ {
		for i := 0; i < n; i++ {
			l.press("b")
		}
		l.must(fmt.Sprintf("history step %d of %d (in the past)", end-n, end), "the database as it was")
		if got := screenBody(l.m); got != screens[end-n] {
			t.Fatalf("%d back: the screen is not as it was:\n%s\nwant\n%s", n, got, screens[end-n])
		}
		if got := fileRows(t, path); got != rows[end-n] {
			t.Fatalf("%d back: the database file holds\n%s\nwant\n%s", n, got, rows[end-n])
		}
		for i := 0; i < end && l.m.track.Line.Pos < end; i++ {
			l.press("]")
		}
		if got := screenBody(l.m); got != screens[end] {
			t.Fatalf("%d back and forward: the screen is not as it was:\n%s\nwant\n%s", n, got, screens[end])
		}
		if got := fileRows(t, path); got != rows[end] {
			t.Fatalf("%d back and forward: the database file holds\n%s\nwant\n%s", n, got, rows[end])
		}
	}
}

// TestNewFutureIsSaid: after b, the recorded next step keeps the future; a crash instead drops
// it, and the status line says so.
func TestNewFutureIsSaid(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press(" ", " ", " ", "b")
	l.must("history step 2 of 3 (in the past)")
	l.press(" ")
	l.must("history step 3 of 3")
	l.mustNot("was dropped")
	l.press("b", "b", "x")
	l.must("history step 2 of 2", "a new future from step 1 (the old one, 2 steps, was dropped)")
}

// TestBackPastTheConcurrentPhase: after's concurrent phase cannot be replayed, and b says so.
func TestBackPastTheConcurrentPhase(t *testing.T) {
	l := newLab(t, "after", 120, 40, engine.Overrides{})
	for i := 0; i < 7; i++ {
		stepOrAnswer(l)
	}
	l.must("history step 7 of 7", "~ ran free")
	l.press("b")
	l.must("history step 7 of 7", "step 6 ran the workers free on goroutines", "the lab goes back no further")
	l.press("[") // the previous mark it can rebuild: just after the crash
	l.must("history step 3 of 7 (in the past)", "the database as it was")
	l.press("]") // the next mark is the concurrent phase itself
	l.must("history step 3 of 7", "cannot be done again exactly")
}

// stepOrAnswer takes one step: space, and when that stops at a question, a wrong answer (the
// step runs the same).
func stepOrAnswer(l *lab) { stepAnswering(l, false) }

// stepAnswering takes one step: space, and when that stops at a question, an answer, right or
// wrong.
func stepAnswering(l *lab, right bool) {
	l.tb.Helper()
	if l.m.ask.Open == nil {
		l.press(" ")
	}
	if q := l.m.ask.Open; q != nil {
		i := l.m.ask.Open.Right
		if !right {
			i = (i + 1) % len(q.Answers)
		}
		l.press(l.m.keys.Answer.Keys()[i])
	}
}

// TestBackAfterRunToTheEnd: each action of e is a recorded step, replayed exactly: the
// header's step, the history's and the actions e ran are one count, and b goes back from the
// end of e to any of them.
func TestBackAfterRunToTheEnd(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	path := labFile(t, l)
	stepOrAnswer(l)
	stepOrAnswer(l)
	body, rows, pos := screenBody(l.m), fileRows(t, path), l.m.track.Line.Pos
	l.press("e")
	if !l.m.frame.Done {
		t.Fatalf("e did not end: %q", l.m.status.Text)
	}
	ran := l.m.finish.actions
	if l.m.track.Line.Pos != pos+ran || len(l.m.track.Line.Entries) != l.m.track.Line.Pos {
		t.Fatalf("after e (%d actions) the history is at step %d of %d, want %d", ran, l.m.track.Line.Pos, len(l.m.track.Line.Entries), pos+ran)
	}
	l.must(fmt.Sprintf("step %d ", pos+ran), fmt.Sprintf("history step %d of %d", pos+ran, pos+ran))
	end, endRows := screenBody(l.m), fileRows(t, path)
	for i := 0; i < ran; i++ {
		l.press("b")
	}
	if got := screenBody(l.m); l.m.track.Line.Pos != pos || got != body || fileRows(t, path) != rows {
		t.Fatalf("back from the end of e to step %d: not as after two steps (at %d):\n%s", pos, l.m.track.Line.Pos, got)
	}
	l.press("e") // along the recorded future
	if got := screenBody(l.m); got != end || fileRows(t, path) != endRows {
		t.Fatalf("e again over the recorded future: not as at the end:\n%s", got)
	}
}

// One step count: after e, a toggle and a crash, the header's step, the history's step and the
// steps e reports are the same number, in many-workers too.
func TestOneStepCount(t *testing.T) {
	for _, name := range []string{"stale-owner", "many-workers"} {
		l := newLab(t, name, 120, 40, engine.Overrides{})
		l.press("k") // a toggle before the first action is a step of the history too
		l.press("e")
		for i := 0; i < 1000 && l.m.finish.on; i++ {
			l.tickAll(1)
		}
		if !l.m.frame.Done {
			t.Fatalf("%s: e did not end: %q", name, l.m.status.Text)
		}
		n := l.m.track.Line.Pos
		if n != 1+l.m.finish.actions || n != len(l.m.track.Line.Entries) {
			t.Fatalf("%s: history at %d of %d, e ran %d steps after 1 toggle", name, n, len(l.m.track.Line.Entries), l.m.finish.actions)
		}
		l.must(fmt.Sprintf("step %d ", n), fmt.Sprintf("ran to the end at full speed: %d steps", n-1))
		if v := l.view(); strings.Contains(v, "history step") && !strings.Contains(v, fmt.Sprintf("history step %d of %d", n, n)) {
			t.Fatalf("%s: the history line disagrees with step %d:\n%s", name, n, v)
		}
	}
}
