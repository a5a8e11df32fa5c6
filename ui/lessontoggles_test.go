package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
)

// The toggles of the registry's other groups (InRetries, InRescue) have lab keys that act, and
// show in the header and on the ? screen, only in a lesson whose run uses them; elsewhere a
// press of one says why it does nothing and changes nothing.
func TestLessonTogglesOnlyWhereTheRunUsesThem(t *testing.T) {
	uses := map[string][]string{
		"playground":    nil,
		"after":         nil,
		"retry-backoff": {engine.ToggleBackoff, engine.ToggleDeadLetter},
		"dead-letter":   {engine.ToggleBackoff, engine.ToggleDeadLetter},
		"rescuer-race":  {engine.ToggleGuardedRescue},
		"clock-skew":    {engine.ToggleDBClock, engine.ToggleProviderFencing},
	}
	for name, want := range uses {
		t.Run(name, func(t *testing.T) {
			l := newLab(t, name, 120, 40, engine.Overrides{})
			for _, tg := range engine.Registry() {
				if tg.Where == engine.InLab {
					continue
				}
				used := false
				for _, w := range want {
					used = used || w == tg.Name
				}
				header := ansi.Strip(strings.Join(l.m.headerView(), "\n"))
				if got := strings.Contains(header, "("+tg.Key+")"); got != used {
					t.Errorf("%s: header shows %s's key %v, want %v:\n%s", name, tg.Name, got, used, header)
				}
				l.press("?")
				if got := strings.Contains(ansi.Strip(l.view()), tg.Help()); got != used {
					t.Errorf("%s: ? screen names %s %v, want %v", name, tg.Name, got, used)
				}
				l.press("?")
				was := tg.Of(l.m.frame.Settings)
				l.press(tg.Key)
				if flipped := tg.Of(l.m.frame.Settings) != was; flipped != used {
					t.Errorf("%s: %s flipped %s: %v, want %v (status %q)", name, tg.Key, tg.Name, flipped, used, l.m.status.Text)
				}
				if used {
					l.must("from the next action on")
					l.press(tg.Key) // back as it was
				} else if !strings.Contains(l.m.status.Text, "is a toggle of the lessons with") {
					t.Errorf("%s: %s says %q, not why it does nothing", name, tg.Key, l.m.status.Text)
				}
			}
		})
	}
}

// Each of the five keys, pressed before the first step of the lesson that uses it, changes the
// run as `leaselab run NAME --TOGGLE=…` does: the verdict and the expectations are the run's,
// and the count the toggle is about moves (rescuer-race with G passes, clock-skew with c
// passes, with P the provider refuses the stale call).
func TestLessonToggleKeysChangeTheRun(t *testing.T) {
	skipSweepUnderRace(t)
	for _, tc := range []struct {
		lesson, key, toggle, metric string
	}{
		{"retry-backoff", "j", engine.ToggleBackoff, "provider_failures"},
		{"dead-letter", "m", engine.ToggleDeadLetter, "dead_lettered"},
		{"rescuer-race", "G", engine.ToggleGuardedRescue, "rescued_finished"},
		{"clock-skew", "c", engine.ToggleDBClock, "early_reclaims"},
		{"clock-skew", "P", engine.ToggleProviderFencing, "fenced_calls"},
	} {
		t.Run(tc.lesson+"/"+tc.key, func(t *testing.T) {
			l := newLab(t, tc.lesson, 120, 40, engine.Overrides{})
			tg, _ := engine.LookupToggle(tc.toggle)
			was := tg.Of(l.m.frame.Settings)
			l.press(tc.key)
			if tg.Of(l.m.frame.Settings) == was {
				t.Fatalf("%s did not flip %s: %q", tc.key, tc.toggle, l.m.status.Text)
			}
			stepToEnd(t, l)
			asWritten, _ := headless(t, tc.lesson, engine.Overrides{})
			flipped, _ := headless(t, tc.lesson, engine.Overrides{Toggles: map[string]bool{tc.toggle: !was}})
			sum := l.m.frame.Summary
			if sum.Passed != flipped.Passed || !sum.ExpectationsMet || sum.ExpectationsMet != flipped.ExpectationsMet {
				t.Errorf("lab: passed %v, met %v; run --%s=%v: passed %v, met %v", sum.Passed, sum.ExpectationsMet,
					tc.toggle, !was, flipped.Passed, flipped.ExpectationsMet)
			}
			if fix := tc.key == "G" || tc.key == "c"; fix && !sum.Passed {
				t.Errorf("%s on: the fix, yet VERDICT FAIL", tc.toggle)
			}
			got, _ := sum.Metric(tc.metric)
			want, _ := flipped.Metric(tc.metric)
			before, _ := asWritten.Metric(tc.metric)
			if got != want || got == before {
				t.Errorf("%s: lab %s, run flipped %s, run as written %s: want the flipped run's, and a change", tc.metric, got, want, before)
			}
		})
	}
}
