package ui

import (
	"strings"
	"testing"

	"leaselab/engine"
)

// The dead-letter lesson in the lab: the parked row shows as DeadLettered with its last error,
// the ledgers count it apart, the rescuer-less run has no rescuer line, and the redrive key
// moves it back to Pending; then neither the line nor the key is left.
func TestDeadLetterInTheLab(t *testing.T) {
	l := newLab(t, "dead-letter", 120, 40, engine.Overrides{})
	if v := l.view(); strings.Contains(v, "dead letters") || strings.Contains(v, "Rescuer") {
		t.Fatalf("before any dead letter the screen has a dead-letter or rescuer line:\n%s", v)
	}
	l.press("e")
	for i := 0; i < 1000 && l.m.finish.on; i++ {
		l.tickAll(1)
	}
	v := l.view()
	for _, want := range []string{"PAY-004 DeadLettered", "timeout", "finished 5 · dead-lettered 1 · lost 0", "V redrives PAY-004"} {
		if !strings.Contains(v, want) {
			t.Errorf("done: the screen lacks %q:\n%s", want, v)
		}
	}
	l.press("V")
	for _, r := range l.m.frame.Rows {
		if r.IdempotencyKey == "PAY-004" && (r.Status != engine.StatusPending || r.Attempts != 0) {
			t.Errorf("after the redrive key PAY-004 is %s with %d attempts, want Pending with 0", r.Status, r.Attempts)
		}
	}
	if v := l.view(); strings.Contains(v, "V redrives") || !strings.Contains(v, "PAY-004 redriven") {
		t.Errorf("after the redrive: the key is still offered or the event is missing:\n%s", v)
	}
}

// The rescuer-race lesson in the lab: the rescuer is an actor with a line of its own, and the
// script's R scan and R rescue run on the step key (the lesson's question before R rescue is
// answered, right, as a learner would).
func TestRescuerInTheLab(t *testing.T) {
	l := newLab(t, "rescuer-race", 120, 40, engine.Overrides{})
	if v := l.view(); !strings.Contains(v, "R Rescuer-R  holds nothing  sweeps 0") {
		t.Fatalf("the rescuer's line is missing:\n%s", v)
	}
	for i := 0; i < 20 && !strings.Contains(l.view(), "rescued 1"); i++ {
		if l.m.ask.Open != nil {
			l.press(l.m.keys.Answer.Keys()[l.m.ask.Open.Right])
			continue
		}
		l.press(" ")
	}
	if v := l.view(); !strings.Contains(v, "rescued 1") || !strings.Contains(v, "undid a finish 1") {
		t.Errorf("after twenty keys the rescuer has not rescued the finished message:\n%s", v)
	}
}
