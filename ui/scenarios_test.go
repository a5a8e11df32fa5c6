package ui

import (
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/ui/common"
)

// TestEveryScenarioRunsToItsVerdict opens each built-in scenario in the lab and drives it to the
// end as a learner would: space, and the clock keys when the lab says so. No error may show.
func TestEveryScenarioRunsToItsVerdict(t *testing.T) {
	for _, name := range sqliteLessons() {
		t.Run(name, func(t *testing.T) {
			var o engine.Overrides
			if name == "many-workers" {
				o.Messages = 24 // its 500 take ten seconds to step through one by one
			}
			l := newLab(t, name, 120, 40, o)
			for i := 0; i < 20_000 && !l.m.frame.Done; i++ {
				st := l.m.status
				switch {
				case st.Level == common.LevelError:
					t.Fatalf("error after %d keys: %s", i, st.Text)
				case l.m.ask.Open != nil: // a lesson's question (ui/question)
					l.press(l.m.keys.Answer.Keys()[l.m.ask.Open.Right])
				case strings.Contains(st.Text, "press f"):
					l.press("f")
				case strings.Contains(st.Text, "press +"):
					l.press("+")
				case strings.Contains(st.Text, "every worker is crashed"):
					l.press("r")
				default:
					l.press("n")
				}
			}
			if !l.m.frame.Done {
				t.Fatalf("not done; last status: %s", l.m.status.Text)
			}
			l.must("VERDICT:")
			checkSize(t, l.view(), 120, 40)
		})
	}
}
