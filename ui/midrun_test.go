package ui

import (
	"strings"
	"testing"

	"leaselab/engine"
)

// Every lesson with its own toggle switched before each of its first steps (the first: the
// run's own setting; later: mid-run), played to its end: the verdict, the expectations and the
// status line never contradict (issue 28: naive-claim with a flipped after Worker-A's claim
// said PASS beside "not as expected"). Switched before any worker acts, the expectations for
// that setting are judged; switched later, they are not, and the lab says why.
func TestMidRunToggleIsJudgedCoherently(t *testing.T) {
	skipSweepUnderRace(t)
	const maxAt = 4 // before steps 0 … 3
	for _, lt := range lessonToggles {
		for at := 0; at < maxAt; at++ {
			l := newLab(t, lt.name, 120, 40, engine.Overrides{})
			flipped := false
			for i := 0; i < 100 && !l.m.frame.Done && !flipped; i++ {
				if l.m.ask.Open == nil && l.m.frame.ScriptIndex >= at {
					l.press(lt.key)
					flipped = true
					continue
				}
				stepAnswering(l, true)
			}
			for i := 0; i < 20 && !l.m.frame.Done; i++ {
				if l.m.ask.Open != nil {
					stepAnswering(l, true)
				}
				l.press("e") // the rest at once: the questions e passes by
			}
			if !flipped {
				break // the script is shorter
			}
			mid := l.m.frame.Summary.ExpectationsNotJudged != ""
			v := l.view()
			switch {
			case !l.m.frame.Done:
				t.Fatalf("%s/%s before step %d: never done:\n%s", lt.name, lt.key, at, v)
			case strings.Contains(v, "VERDICT: PASS") && strings.Contains(v, "not as expected"),
				strings.Contains(v, "expectations not judged") && strings.Contains(v, "as expected with"):
				t.Errorf("%s/%s before step %d: the verdict and the expectations contradict:\n%s", lt.name, lt.key, at, v)
			case mid && !strings.Contains(v, "expectations not judged: the run left the script ("+lt.toggle+" switched "):
				t.Errorf("%s/%s before step %d: not judged, but the lab does not say why:\n%s", lt.name, lt.key, at, v)
			case !mid && !strings.Contains(v, "as expected"):
				t.Errorf("%s/%s before step %d: judged, but the lab says nothing of it:\n%s", lt.name, lt.key, at, v)
			case at == 0 && mid:
				t.Errorf("%s/%s before the first step: the run's own setting, yet not judged: %s", lt.name, lt.key, l.m.frame.Summary.ExpectationsNotJudged)
			}
			for _, d := range engine.Disagreements(l.m.frame.Summary, l.m.frame.Events, false) {
				t.Errorf("%s/%s before step %d: %s", lt.name, lt.key, at, d)
			}
		}
	}
}
