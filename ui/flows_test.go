package ui

import (
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/ui/common"
)

// TestWorkshop is the five minutes of the README: crash the owner, see the lease hold, move the
// clock past it, see it EXPIRED, and see another worker reclaim it.
func TestWorkshop(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("n")
	l.press("x")
	l.must("CRASHED", "Worker-A CRASHED holding PAY-001")
	if row := l.row("PAY-001"); !strings.Contains(row, "Processing") || !strings.Contains(row, "Worker-A") {
		t.Fatalf("the crashed owner's row changed: %q", row)
	}
	l.press("f")
	l.must("clock 09:00:00.501Z")
	if row := l.row("PAY-001"); !strings.Contains(row, "EXPIRED") {
		t.Fatalf("PAY-001 not EXPIRED after f: %q", row)
	}
	l.press("n")
	row := l.row("PAY-001")
	if !strings.Contains(row, "Worker-B") || !strings.Contains(row, "09:00:01.001Z") {
		t.Fatalf("Worker-B did not reclaim PAY-001: %q", row)
	}
	l.must("Worker-B reclaimed PAY-001 from Worker-A")
	l.press("r")
	l.must("Worker-A restarted")
	l.mustNot("CRASHED  ")
}

func TestNothingToDoSaysWhy(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{Messages: 1})
	l.press("n", "x", "n")
	l.must("Worker-B claim BLOCKED")
	l.press("n")
	l.must("nothing to do at 09:00:00.000Z", "press f")
}

func TestStaleResultIsDropped(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	f := l.m.frame
	l.send(resultMsg{gen: l.m.gen - 1, op: op{cmd: engine.CmdNext{}}, frame: &common.Frame{Frame: engine.Frame{Name: "stale"}}, acted: true, note: "stale note"})
	if l.m.frame != f || l.m.track.Acted() != 0 || strings.Contains(l.view(), "stale note") {
		t.Fatal("a result of an older generation was taken")
	}
	l.send(openedMsg{gen: l.m.gen - 1, name: "stale"})
	if l.m.frame != f {
		t.Fatal("an open of an older generation was taken")
	}
}

// isCrash reports whether o is x's command.
func isCrash(o op) bool {
	_, ok := o.cmd.(engine.CmdCrash)
	return ok
}

func TestKeysWaitForTheEngine(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	// Press n, and before its command has run, x and q's cousins: they must queue, not run.
	m, stepCmd := l.m.update(keyMsg("n"))
	m, crashCmd := m.update(keyMsg("x"))
	if crashCmd != nil || len(m.queue) != 1 || !isCrash(m.queue[0]) {
		t.Fatalf("x while busy: cmd %v, queue %v; want it queued", crashCmd != nil, m.queue)
	}
	for i := 0; i < 3*maxQueuedSteps; i++ {
		m, _ = m.update(keyMsg("n"))
	}
	if got := stepsIn(m.queue); got != maxQueuedSteps {
		t.Fatalf("%d steps queued, want them coalesced at %d", got, maxQueuedSteps)
	}
	m, _ = m.update(keyMsg("x"))
	if !isCrash(m.queue[len(m.queue)-1]) {
		t.Fatal("a crash was dropped")
	}
	l.m = m
	l.run(stepCmd)
	var texts []string
	for _, e := range l.m.frame.Events {
		texts = append(texts, e.Text)
	}
	log := strings.Join(texts, "\n")
	if !strings.Contains(log, "Worker-A claimed PAY-001") || !strings.Contains(log, "Worker-A CRASHED holding PAY-001") {
		t.Fatalf("the step then the crash did not run in order:\n%s", log)
	}
	l.must("Worker-A is already crashed") // the last key, a second x, ran last
	if len(l.m.queue) != 0 || l.m.busy {
		t.Fatalf("queue not drained: %d left, busy %v", len(l.m.queue), l.m.busy)
	}
}

func TestFollowsTheChangedRow(t *testing.T) {
	l := newLab(t, "playground", 80, 24, engine.Overrides{Messages: 40})
	l.press("end")
	l.press("n")
	l.must("PAY-001")
}

func TestLeasingOffDuplicatesEveryMessage(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("l")
	for i := 0; i < 200 && !l.m.frame.Done; i++ {
		l.press("n")
	}
	l.must("duplicated messages 6", "VERDICT: FAIL", "!! A B ×2")
	l.press("n")
	l.must("the scenario is done (FAIL)")
}

func TestLeasingOnProcessesEachOnce(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	for i := 0; i < 200 && !l.m.frame.Done; i++ {
		l.press("n")
	}
	l.must("duplicated messages 0", "VERDICT: PASS", "ONE OWNER PER MESSAGE")
	l.mustNot("!!")
}

func TestOpenFailureShowsErrorAndKeepsRunning(t *testing.T) {
	l := newLab(t, "no-such-scenario", 120, 40, engine.Overrides{})
	l.must("could not open no-such-scenario", "R tries again")
	l.press("n")
	if l.m.keys.Step.Enabled() {
		t.Fatal("step key on without a session")
	}
	l.press("tab")
	l.must("Playground")
	if !l.m.keys.Step.Enabled() {
		t.Fatal("step key still off after a scenario opened")
	}
}
