package ui

import (
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
