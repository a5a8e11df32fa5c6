package ui

import (
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"leaselab/engine"
)

// The lessons of a message's rest of life (issue 20) in the lab, against goldens: their own
// toggles and keys in the header, the dead letters' line and V, the rescuer's pane, and a
// check's short name where the whole does not fit.
func TestLessonViewGolden(t *testing.T) {
	toEnd := func(l *lab) {
		for i := 0; i < 500 && !l.m.frame.Done; i++ {
			stepAnswering(l, true) // a lesson's question, answered right
		}
		if !l.m.frame.Done {
			t.Fatalf("not done: %s", l.m.status.Text)
		}
	}
	for _, tc := range []struct {
		name, lesson string
		w, h         int
		keys         func(*lab)
	}{
		{"dead-letter_120x40_done", "dead-letter", 120, 40, toEnd},
		{"dead-letter_80x24_done", "dead-letter", 80, 24, toEnd},
		{"rescuer-race_120x40_done", "rescuer-race", 120, 40, toEnd},
		{"clock-skew_110x30_start", "clock-skew", 110, 30, func(*lab) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLab(t, tc.lesson, tc.w, tc.h, engine.Overrides{})
			tc.keys(l)
			v := l.view()
			checkSize(t, v, tc.w, tc.h)
			golden.RequireEqual(t, []byte(v))
		})
	}
}
