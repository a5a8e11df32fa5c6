package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/pace"
)

// shift+tab opens the scenario before the current one, going round from the first to the last.
func TestShiftTabOpensThePreviousScenario(t *testing.T) {
	l := newLab(t, "before", 120, 40, engine.Overrides{})
	start := l.m.target
	l.send(tea.KeyMsg{Type: tea.KeyShiftTab})
	if want := l.m.cycle[(indexOf(l.m.cycle, start)+len(l.m.cycle)-1)%len(l.m.cycle)]; l.m.target != want {
		t.Fatalf("shift+tab from %s opened %s, want %s", start, l.m.target, want)
	}
	l.must("opened " + l.m.target)
	l.press("tab")
	if l.m.target != start {
		t.Fatalf("tab after shift+tab opened %s, want %s back", l.m.target, start)
	}
	first := newLab(t, l.m.cycle[0], 120, 40, engine.Overrides{})
	first.send(tea.KeyMsg{Type: tea.KeyShiftTab})
	if last := first.m.cycle[len(first.m.cycle)-1]; first.m.target != last {
		t.Fatalf("shift+tab on the first scenario opened %s, want the last, %s", first.m.target, last)
	}
}

func indexOf(xs []string, x string) int {
	for i, s := range xs {
		if s == x {
			return i
		}
	}
	return -1
}

// esc closes the ? screen, then the explanation; with nothing open it does nothing.
func TestEscClosesHelpAndExplanation(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	esc := tea.KeyMsg{Type: tea.KeyEsc}
	l.press("?")
	l.must("step     space/n step")
	l.send(esc)
	if l.m.showHelp {
		t.Fatal("esc did not close the ? screen")
	}
	l.mustNot("step     space/n step")
	l.press("i")
	if l.m.layout.caption == 0 {
		l.press("i") // it was on screen already (auto): i hid it; show it
	}
	l.must("About this scenario")
	l.send(esc)
	l.mustNot("About this scenario")
	if l.m.keys.Close.Enabled() {
		t.Fatal("esc still on with nothing to close")
	}
	before := l.m.status
	l.send(esc)
	if l.m.status != before {
		t.Fatalf("esc with nothing open said %q", l.m.status.Text)
	}
	// The watch's ? screen closes with esc too.
	w := newWatch(t.Context(), WatchConfig{DB: nil, Path: "x.db"}, common.DefaultStyles(nil))
	w, _ = w.update(keyMsg("?"))
	w, _ = w.update(esc)
	if w.showHelp {
		t.Fatal("esc did not close the watch's ? screen")
	}
}

// space, s and p while the workers free-run say why they do nothing, and what to press.
func TestStepKeysDuringAFreeRunSayWhy(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("g")
	defer func() { l.press("g"); l.stopped() }()
	for _, k := range []string{" ", "s", "p", "e"} {
		l.m.status = common.Status{}
		l.press(k)
		if !strings.Contains(l.m.status.Text, "the workers run free: nothing steps them but themselves (g stops them)") {
			t.Errorf("%q during a free run said %q", k, l.m.status.Text)
		}
	}
	if l.m.track.Acted() != 0 || l.m.play.Playing || l.m.finish.on {
		t.Fatal("a step key acted during the free run")
	}
}

// The free run's starting pace is chosen by the scenario's size so that it lasts about a
// minute; < and > set it before g too; R brings back the scenario's own.
func TestFreePaceBySizeBeforeGAndAfterReset(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    engine.Overrides
		want time.Duration
	}{
		{"playground", engine.Overrides{}, 5 * time.Second},                     // 6 messages, 2 workers
		{"many-workers", engine.Overrides{}, 200 * time.Millisecond},            // 500 messages, 8 workers
		{"playground", engine.Overrides{Messages: 40, Workers: 2}, time.Second}, // 60 actions each
	} {
		l := newLab(t, tc.name, 120, 40, tc.o)
		if got := l.m.free.pace.Interval(); got != tc.want {
			t.Errorf("%s %+v: starting pace %s, want %s", tc.name, tc.o, got, tc.want)
		}
		msgs, ws := len(l.m.frame.Rows), len(l.m.frame.Workers)
		if run := time.Duration((pace.ActionsPerMessage*msgs+ws-1)/ws) * l.m.free.pace.Interval(); run > time.Minute || run < 15*time.Second {
			t.Errorf("%s: a free run at the starting pace takes about %s, not about a minute", tc.name, run)
		}
	}
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press(">", ">")
	l.must("free run (g): pace 1s")
	l.press("g")
	l.must("FREE-RUNNING", "pace 1s")
	l.press("g")
	l.stopped()
	l.press("R")
	if got := l.m.free.pace.Interval(); got != 5*time.Second || l.m.play.Speed() != pace.DefaultSpeed {
		t.Fatalf("after R: free pace %s, play speed %d; want the scenario's 5s and the default", got, l.m.play.Speed())
	}
}

// With no scenario open, an engine key says what to press instead; a scroll key says nothing.
func TestKeysWithoutASessionSayWhy(t *testing.T) {
	l := newLab(t, "no-such-scenario", 120, 40, engine.Overrides{})
	l.press("x")
	l.must("! no scenario is open: R tries again, tab opens the next one")
	l.m.status = common.Status{}
	l.press("down")
	if l.m.status.Text != "" {
		t.Fatalf("a scroll key with nothing to scroll said %q", l.m.status.Text)
	}
}
