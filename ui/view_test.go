package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"leaselab/engine"
	"leaselab/ui/common"
)

// The goldens use golden's -update flag (teatest imports that package, so the flag is defined
// once): go test ./ui -run TestViewGolden -update

// workshopState is the lesson's moment: Worker-A claimed PAY-001 and crashed, the clock moved
// past its lease, and Worker-B reclaimed it.
func workshopState(l *lab) { l.press("n", "x", "f", "n") }

func TestViewGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		w, h int
		keys func(*lab)
	}{
		{"120x40", 120, 40, workshopState},
		{"80x24", 80, 24, workshopState},
		{"too_small", 60, 20, workshopState},
		{"120x40_expired", 120, 40, func(l *lab) { l.press("n", "x", "f") }},
		{"80x24_before_done", 80, 24, func(l *lab) {
			l.press("tab")
			for i := 0; i < 100 && !l.m.frame.Done; i++ {
				stepAnswering(l, true) // before asks two questions
			}
		}},
		{"120x40_help", 120, 40, func(l *lab) { l.press("?") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLab(t, "playground", tc.w, tc.h, engine.Overrides{})
			tc.keys(l)
			v := l.view()
			checkSize(t, v, tc.w, tc.h)
			golden.RequireEqual(t, []byte(v))
		})
	}
}

// checkSize fails when the view is taller or wider than the window.
func checkSize(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) > h {
		t.Errorf("view has %d lines, window %d", len(lines), h)
	}
	for i, line := range lines {
		if common.Width(line) > w {
			t.Errorf("line %d is %d cells wide, window %d: %q", i+1, common.Width(line), w, line)
		}
	}
}

func TestViewNeverExceedsTheWindow(t *testing.T) {
	l := newLab(t, "playground", 80, 24, engine.Overrides{Messages: 30, Workers: 8})
	l.press("n", "n", "n", "?", "i")
	for _, size := range [][2]int{{80, 24}, {81, 25}, {100, 30}, {110, 30}, {120, 40}, {200, 60}, {79, 24}, {80, 23}, {20, 3}, {1, 1}, {300, 10}} {
		l.send(windowSize(size[0], size[1]))
		checkSize(t, l.view(), size[0], size[1])
	}
}

func TestDefaultSizeBeforeTheFirstWindowSize(t *testing.T) {
	l := newLab(t, "playground", 0, 0, engine.Overrides{})
	v := l.view()
	checkSize(t, v, defaultWidth, defaultHeight)
	if !strings.Contains(v, "LEASING ON") || !strings.Contains(v, "PAY-006") {
		t.Fatalf("default view lacks the badge or the rows:\n%s", v)
	}
}

func TestTooSmallSaysWhatItNeeds(t *testing.T) {
	l := newLab(t, "playground", 60, 20, engine.Overrides{})
	l.must("terminal too small (need 80×24, have 60×20)")
	l.press("q")
	if !l.quit {
		t.Fatal("q does not quit the too-small screen")
	}
}

func TestManyWorkersFollowTheSelection(t *testing.T) {
	l := newLab(t, "playground", 80, 24, engine.Overrides{Messages: 1000, Workers: 8})
	l.press("8")
	l.must("▸ 8 Worker-H")
	l.must("rows 1–")
}

// TestHeaderSaysTemporary: a lab on a temporary database says so instead of naming a file the
// user never chose.
func TestHeaderSaysTemporary(t *testing.T) {
	cfg := Config{Scenarios: sqliteLessons(), Open: opener(t, engine.Overrides{}), TempDB: true}
	l := newLabOn(t, "playground", 120, 40, cfg)
	l.must("db temporary (removed at exit)")
	l.mustNot("db " + shownPath)
}
