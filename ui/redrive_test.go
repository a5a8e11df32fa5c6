package ui

import (
	"fmt"
	"testing"

	"leaselab/engine"
)

// At 80×24 the dead letters' line has its room, and V redrives the dead letter it marks, then
// the next in the table's order, each press one: every dead letter can be chosen.
func TestRedriveGoesRoundTheDeadLetters(t *testing.T) {
	all := 1.0
	l := newLab(t, "dead-letter", 80, 24, engine.Overrides{FailRate: &all, MaxAttempts: 1})
	for i := 0; i < 500 && !l.m.frame.Done; i++ {
		stepAnswering(l, true)
	}
	dead := deadLettered(l.m.frame)
	if len(dead) < 3 {
		t.Fatalf("dead letters %v, want at least 3:\n%s", dead, l.view())
	}
	l.must(fmt.Sprintf("dead letters %d", len(dead)), "V redrives "+dead[0])
	for i, k := range dead[:3] {
		l.press("V")
		if st := statusOf(l.m.frame, k); st != engine.StatusPending {
			t.Fatalf("V %d: %s is %s, want Pending; status %q", i+1, k, st, l.m.status.text)
		}
		if left := deadLettered(l.m.frame); len(left) != len(dead)-i-1 {
			t.Fatalf("V %d: dead letters %v, want %d", i+1, left, len(dead)-i-1)
		}
		if i+1 < len(dead) {
			l.must("V redrives " + dead[i+1])
		}
	}
	checkSize(t, l.view(), 80, 24)
}

// The dead letter V takes is the one after the one it redrove last, round to the first.
func TestRedriveTarget(t *testing.T) {
	f := &frame{}
	for _, r := range []struct {
		key    string
		status string
	}{{"PAY-001", engine.StatusDeadLettered}, {"PAY-002", engine.StatusProcessed}, {"PAY-003", engine.StatusDeadLettered}, {"PAY-004", engine.StatusDeadLettered}} {
		f.Rows = append(f.Rows, engine.Row{IdempotencyKey: r.key, Status: r.status})
	}
	for after, want := range map[string]string{"": "PAY-001", "PAY-001": "PAY-003", "PAY-002": "PAY-003", "PAY-003": "PAY-004", "PAY-004": "PAY-001", "gone": "PAY-001"} {
		if got := (deadLettersPane{after: after}).target(f); got != want {
			t.Errorf("after %q: V takes %s, want %s", after, got, want)
		}
	}
}

// statusOf is the status of key's row in f.
func statusOf(f *frame, key string) string {
	for _, r := range f.Rows {
		if r.IdempotencyKey == key {
			return r.Status
		}
	}
	return ""
}
