package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/engine/share"
)

// codeOfLesson is a Config.Share as the command line's, for built-in lessons opened with o: the
// code of the moment and the words around it.
func codeOfLesson(o engine.Overrides) func(string, []engine.Entry) (string, error) {
	return func(name string, entries []engine.Entry) (string, error) {
		moves, all := share.MovesOf(entries)
		code, err := share.Encode(share.Code{Lesson: name, Overrides: o, Moves: moves})
		why := ""
		if !all {
			why = ", the last before the workers ran free (what they did then cannot be replayed)"
		}
		return fmt.Sprintf("share code of step %d%s: %s (%d characters; leaselab --code CODE opens this moment)", len(moves), why, code, len(code)), err
	}
}

// codeOnScreen is the code S put on the screen: a word of the status line, whole on its line.
func codeOnScreen(t *testing.T, l *lab) string {
	t.Helper()
	_, after, ok := strings.Cut(l.m.status.Text, "share code of step ")
	if !ok {
		t.Fatalf("S showed no code: %q", l.m.status.Text)
	}
	_, after, _ = strings.Cut(after, ": ")
	code := strings.Fields(after)[0]
	if !strings.Contains(l.view(), code) {
		t.Fatalf("the code %s is not whole on the %d×%d screen:\n%s", code, l.m.width, l.m.height, l.view())
	}
	return code
}

// TestShareKeyOpensTheSameMoment: in every lesson, after a person's moves (steps and answers, a
// crash, the clock, a restart, a worker stepped, a toggle), S shows the moment's code whole at
// 80×24, and a lab opened from it (Config.Replay) shows the same screen and the same rows in
// its database file, with the moves in its history: b steps back through them.
func TestShareKeyOpensTheSameMoment(t *testing.T) {
	seed := int64(3)
	o := engine.Overrides{Seed: &seed}
	for _, name := range sqliteLessons() {
		t.Run(name, func(t *testing.T) {
			l := newLabOn(t, name, 80, 24, Config{Scenarios: sqliteLessons(), Open: opener(t, o), Share: codeOfLesson(o)})
			for _, k := range []string{" ", " ", " ", "x", "+", "f", " ", " ", "r", "2", "s", "o", " "} {
				if k == " " {
					stepOrAnswer(l)
				} else {
					l.press(k)
				}
			}
			l.press("S")
			code := codeOnScreen(t, l)
			c, err := share.Decode(code)
			if err != nil {
				t.Fatal(err)
			}
			for l.m.track.Line.Pos > len(c.Moves) { // the code stops before a concurrent phase: so does the moment
				if !strings.Contains(l.m.status.Text, "cannot be replayed") && l.m.track.Line.Pos == len(l.m.track.Line.Entries) {
					t.Fatalf("a code of %d moves at step %d, and no word of why: %q", len(c.Moves), l.m.track.Line.Pos, l.m.status.Text)
				}
				l.press("b")
			}
			again := newLabOn(t, c.Lesson, 80, 24, Config{Scenarios: sqliteLessons(), Open: opener(t, c.Overrides), Replay: c.Moves, Share: codeOfLesson(c.Overrides)})
			// The frame's %+v prints pointers (the incident card, the rescuer): their addresses differ.
			addr := regexp.MustCompile(`0x[0-9a-f]+`)
			if want, got := addr.ReplaceAllString(screenBody(l.m), "0x"), addr.ReplaceAllString(screenBody(again.m), "0x"); got != want {
				t.Errorf("the screen opened from the code differs from the moment's:\n got %s\nwant %s", got, want)
			}
			if want, got := fileRows(t, labFile(t, l)), fileRows(t, labFile(t, again)); got != want {
				t.Errorf("the rows differ:\n got %s\nwant %s", got, want)
			}
			if !strings.Contains(again.m.status.Text, "opened from a share code") {
				t.Errorf("status after the replay: %q", again.m.status.Text)
			}
			if again.m.track.Line.Pos != len(c.Moves) && again.m.track.Line.Pos != l.m.track.Line.Pos {
				t.Errorf("the history holds %d moves, the code %d", again.m.track.Line.Pos, len(c.Moves))
			}
			again.press("S")
			if got := codeOnScreen(t, again); got != code {
				t.Errorf("S on the reopened moment: %s, want %s", got, code)
			}
			// b goes back through the replayed moves as through the moment's own.
			l.press("b")
			again.press("b")
			if again.m.track.Line.Pos != l.m.track.Line.Pos || again.m.track.Line.Pos >= len(c.Moves) {
				t.Errorf("b after the replay: at %d, the moment's lab at %d (of %d moves)", again.m.track.Line.Pos, l.m.track.Line.Pos, len(c.Moves))
			}
		})
	}
}

// TestShareKeyWithoutCodes: a lab with no Config.Share (a served lab) says where codes are made.
func TestShareKeyWithoutCodes(t *testing.T) {
	l := newLab(t, "playground", 80, 24, engine.Overrides{})
	l.press("S")
	if !strings.Contains(l.m.status.Text, "leaselab share playground") {
		t.Errorf("S with no codes: %q", l.m.status.Text)
	}
}

// TestShareKeyOnTheHelpScreen: with codes on, S is on the ? screen, which stays whole at 80×24
// in every lesson (the lessons with a toggle of their own have no line to spare).
func TestShareKeyOnTheHelpScreen(t *testing.T) {
	for _, name := range sqliteLessons() {
		l := newLabOn(t, name, 80, 24, Config{Scenarios: sqliteLessons(), Open: opener(t, engine.Overrides{}), Share: codeOfLesson(engine.Overrides{})})
		l.press("?")
		if v := l.view(); !strings.Contains(v, "S share code") || strings.Contains(v, "more line") {
			t.Errorf("%s: the ? screen at 80×24:\n%s", name, v)
		}
	}
}
