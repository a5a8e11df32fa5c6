package ui

import (
	"fmt"
	"testing"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/deadletters"
)

// At 80×24 the dead letters' line has its room, and V redrives the dead letter it marks, then
// the next in the table's order, each press one: every dead letter can be chosen.
func TestRedriveGoesRoundTheDeadLetters(t *testing.T) {
	all := 1.0
	l := newLab(t, "dead-letter", 80, 24, engine.Overrides{FailRate: &all, MaxAttempts: 1})
	for i := 0; i < 500 && !l.m.frame.Done; i++ {
		stepAnswering(l, true)
	}
	dead := deadletters.DeadLettered(l.m.frame)
	if len(dead) < 3 {
		t.Fatalf("dead letters %v, want at least 3:\n%s", dead, l.view())
	}
	l.must(fmt.Sprintf("dead letters %d", len(dead)), "V redrives "+dead[0])
	for i, k := range dead[:3] {
		l.press("V")
		if st := statusOf(l.m.frame, k); st != engine.StatusPending {
			t.Fatalf("V %d: %s is %s, want Pending; status %q", i+1, k, st, l.m.status.Text)
		}
		if left := deadletters.DeadLettered(l.m.frame); len(left) != len(dead)-i-1 {
			t.Fatalf("V %d: dead letters %v, want %d", i+1, left, len(dead)-i-1)
		}
		if i+1 < len(dead) {
			l.must("V redrives " + dead[i+1])
		}
	}
	checkSize(t, l.view(), 80, 24)
}

// statusOf is the status of key's row in f.
func statusOf(f *common.Frame, key string) string {
	for _, r := range f.Rows {
		if r.IdempotencyKey == key {
			return r.Status
		}
	}
	return ""
}

// dead-letter played to its end, then V: the run is not over any more (its message is Pending
// again), so the verdict is not the one of a run that never ended; space lets the workers take
// the redriven message up, and the verdict follows what they did (issue 28). The expectations
// describe the script's own run: after the redrive they are not judged, and say so.
func TestRedriveAtTheEndRunsOn(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		l := newLab(t, "dead-letter", size[0], size[1], engine.Overrides{})
		for i := 0; i < 50 && !l.m.frame.Done; i++ {
			stepAnswering(l, true)
		}
		l.must("VERDICT: PASS")
		l.press("V")
		if st := statusOf(l.m.frame, "PAY-004"); st != engine.StatusPending || l.m.frame.Done {
			t.Fatalf("%v: after V PAY-004 is %s, done %v", size, st, l.m.frame.Done)
		}
		l.mustNot("RETRIED FOR EVER", "VERDICT: FAIL")
		for i := 0; i < 50 && !l.m.frame.Done; i++ {
			l.press(" ")
		}
		if st := statusOf(l.m.frame, "PAY-004"); st != engine.StatusDeadLettered || !l.m.frame.Done {
			t.Fatalf("%v: after the redrive and space, PAY-004 is %s, done %v:\n%s", size, st, l.m.frame.Done, l.view())
		}
		l.must("VERDICT: PASS", "expectations not judged")
		l.mustNot("RETRIED FOR EVER", "not as expected")
		sum := l.m.frame.Summary
		if sum.StatusChecksByKey["PAY-004"] != 6 || sum.ExpectationsNotJudged == "" {
			t.Errorf("%v: PAY-004 called %d times (want 3 + 3), not judged %q", size, sum.StatusChecksByKey["PAY-004"], sum.ExpectationsNotJudged)
		}
	}
}
