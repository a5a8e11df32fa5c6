package ui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"leaselab/engine"
)

// TestIncidentCardOnI: a lesson that replays a real bug shows its card once i asks for the
// explanation, and not before; a lesson without one shows none.
func TestIncidentCardOnI(t *testing.T) {
	l := newLab(t, "rescuer-race", 120, 60, engine.Overrides{})
	if strings.Contains(l.view(), "Incident: the real bug") {
		t.Fatalf("the card is on screen before i:\n%s", l.view())
	}
	l.press("i")
	v := l.view()
	for _, want := range []string{"Incident: the real bug", "River issue #1302", "Fix toggle: --guarded-rescue"} {
		if !strings.Contains(v, want) {
			t.Errorf("after i, the screen lacks %q:\n%s", want, v)
		}
	}
	l.press("i")
	if strings.Contains(l.view(), "Incident: the real bug") {
		t.Errorf("a second i left the card on screen")
	}
	p := newLab(t, "aba-fencing", 120, 60, engine.Overrides{})
	p.press("i")
	p.press("i")
	if strings.Contains(p.view(), "Incident:") {
		t.Errorf("a lesson without a card shows one")
	}
}

// TestExplanationNeverCutSilently: on every lesson, at the smallest size and a roomy one, the
// explanation that i opens (with its incident card, where the lesson has one) is either whole
// on screen or ends with a line counting what is left out and saying where it is whole.
func TestExplanationNeverCutSilently(t *testing.T) {
	more := regexp.MustCompile(`\+(\d+) more lines?: a taller window shows them`)
	for _, name := range sqliteLessons() {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			l := newLab(t, name, size[0], size[1], engine.Overrides{})
			l.press("i")
			v := l.view()
			if !strings.Contains(v, "About this scenario") {
				l.press("i") // the explanation was on screen already: i hid it
				v = l.view()
			}
			caption := l.m.caption.Lines(l.m.scene(), size[0])
			last := strings.TrimSpace(caption[len(caption)-1])
			if strings.Contains(v, last) {
				continue
			}
			m := more.FindStringSubmatch(v)
			if m == nil {
				t.Errorf("%s at %dx%d: the explanation is cut without a word (its last line %q is not on screen):\n%s", name, size[0], size[1], last, v)
				continue
			}
			shown := 0
			for _, c := range caption {
				if strings.Contains(v, strings.TrimSpace(c)) {
					shown++
				}
			}
			if n, _ := strconv.Atoi(m[1]); n != len(caption)-shown {
				t.Errorf("%s at %dx%d: %q, but %d of the explanation's %d lines are on screen", name, size[0], size[1], m[0], shown, len(caption))
			}
		}
	}
}
