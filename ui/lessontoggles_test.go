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
					t.Errorf("%s: %s flipped %s: %v, want %v (status %q)", name, tg.Key, tg.Name, flipped, used, l.m.status.text)
				}
				if used {
					l.must("from the next action on")
					l.press(tg.Key) // back as it was
				} else if !strings.Contains(l.m.status.text, "is a toggle of the lessons with") {
					t.Errorf("%s: %s says %q, not why it does nothing", name, tg.Key, l.m.status.text)
				}
			}
		})
	}
}
