package ui

import (
	"strings"
	"testing"

	"leaselab/engine"
)

// verdictAgrees fails when the verdict, the expectations line and the checks disagree: a PASS
// beside a failing check of the verdict, or beside "✗ not as expected".
func verdictAgrees(t *testing.T, l *lab, what string) {
	t.Helper()
	f := l.m.frame
	if !f.Done || f.Summary == nil {
		t.Fatalf("%s: not done: %q", what, l.m.status.Text)
	}
	sum := f.Summary
	for _, c := range sum.Checks {
		if c.Decides && !c.OK && sum.Passed {
			t.Errorf("%s: VERDICT PASS beside the failing check %s (%s)", what, c.ID, c.Detail)
		}
	}
	v := l.view()
	switch {
	case sum.Passed && strings.Contains(v, "not as expected"):
		t.Errorf("%s: VERDICT PASS beside ✗ not as expected:\n%s", what, v)
	case !sum.Passed && !strings.Contains(v, "VERDICT: FAIL"), sum.Passed && !strings.Contains(v, "VERDICT: PASS"):
		t.Errorf("%s: the banner is not the summary's verdict (passed %v):\n%s", what, sum.Passed, v)
	}
}

// Every SQLite lesson, as written and with each toggle flipped at the start, run to its end
// (scripted), after a free run, and after a crash and restart in a free run: the verdict, the
// expectations line and the checks never contradict each other.
func TestVerdictAgreesWithItsChecks(t *testing.T) {
	toggleKeys := map[string]string{"": "", engine.ToggleLeasing: "l", engine.ToggleAtomicClaim: "a",
		engine.ToggleOwnershipCheck: "o", engine.ToggleFencing: "k", engine.ToggleHeartbeat: "h"}
	modes := map[string][]string{"scripted": nil, "free run": {"g", "g"}, "crash in a free run": {"g", "x", "r", "g"}}
	for _, name := range sqliteLessons() {
		for tg, k := range toggleKeys {
			for mode, keys := range modes {
				if testing.Short() && (tg != "" || mode != "scripted") {
					continue
				}
				what := name + " " + tg + " " + mode
				t.Run(strings.ReplaceAll(what, " ", "_"), func(t *testing.T) {
					l := newLab(t, name, 120, 40, engine.Overrides{})
					if k != "" {
						l.press(k)
					}
					for _, key := range keys {
						l.press(key)
						if key == "g" && l.m.free.on {
							l.pollUntil("an action", func() bool { return l.m.frame.Total != (engine.WorkerLedger{}) })
						}
					}
					l.press("e")
					for i := 0; i < 1000 && l.m.finish.on; i++ {
						l.tickAll(1)
					}
					verdictAgrees(t, l, what)
				})
			}
		}
	}
}
