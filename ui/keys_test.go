package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
)

func TestOpenShowsPendingRowsAndBadge(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	for i := 1; i <= 6; i++ {
		row := l.row(engine.MessageKey(i))
		if !strings.Contains(row, "Pending") {
			t.Fatalf("row %d is not Pending: %q", i, row)
		}
	}
	l.must("LEASING ON", "lease 500ms", "clock 09:00:00.000Z", "step 0", "paused", "Worker-A", "Worker-B")
}

func TestStepKeys(t *testing.T) {
	for _, k := range []string{" ", "n"} {
		t.Run(strings.TrimSpace(k)+"step", func(t *testing.T) {
			l := newLab(t, "playground", 120, 40, engine.Overrides{})
			l.press(k)
			row := l.row("PAY-001")
			for _, want := range []string{"Processing", "Worker-A", "09:00:00.500Z", "█"} {
				if !strings.Contains(row, want) {
					t.Fatalf("PAY-001 row lacks %q: %q", want, row)
				}
			}
			l.must("step 1", "Worker-A claimed PAY-001, lease until 09:00:00.500Z", "claimed PAY-001")
			if !strings.HasPrefix(row, "•") {
				t.Errorf("the changed row is not marked: %q", row)
			}
		})
	}
}

func TestSeveralRunesCountAsSeveralPresses(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("runes:nn")
	if l.m.track.Acted() != 2 {
		t.Fatalf("steps = %d after \"nn\", want 2", l.m.track.Acted())
	}
	l.must("Worker-B claimed PAY-002")
	// A paste is not typing: it does nothing.
	l.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("nnnn"), Paste: true})
	if l.m.track.Acted() != 2 {
		t.Fatalf("a paste stepped: steps = %d", l.m.track.Acted())
	}
}

func TestSelectWorker(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("2")
	if l.m.workers.Selected() != 1 {
		t.Fatalf("selected = %d after 2", l.m.workers.Selected())
	}
	l.must("▸ 2 Worker-B", "Worker-B selected")
	l.press("9")
	l.must("no worker 9: this scenario has 2")
	if l.m.workers.Selected() != 1 {
		t.Fatal("9 changed the selection")
	}
	l.press("left")
	if l.m.workers.Selected() != 0 {
		t.Fatal("← did not select the previous worker")
	}
	l.press("right")
	if l.m.workers.Selected() != 1 {
		t.Fatal("→ did not select the next worker")
	}
	// → on the last worker goes round to the first, ← on the first to the last.
	l.press("right")
	l.mustNot("no worker")
	if l.m.workers.Selected() != 0 {
		t.Fatalf("→ on the last worker selected %d, want the first", l.m.workers.Selected())
	}
	l.press("left")
	l.mustNot("no worker 0")
	if l.m.workers.Selected() != 1 {
		t.Fatalf("← on the first worker selected %d, want the last", l.m.workers.Selected())
	}
}

func TestStepSelectedWorker(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("2", "s")
	if row := l.row("PAY-001"); !strings.Contains(row, "Worker-B") {
		t.Fatalf("s with Worker-B selected did not make B claim PAY-001: %q", row)
	}
	l.press("s")
	l.must("Worker-B processed PAY-001")
}

func TestCrashAndRestartRefusals(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("r")
	l.must("Worker-A is not crashed")
	l.press("x", "x")
	l.must("Worker-A is already crashed")
	l.press("s")
	l.must("Worker-A is CRASHED: press r to restart it")
}

func TestPauseKey(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("n", "z")
	l.must("PAUSED", "Worker-A PAUSED")
	l.press("z")
	l.must("Worker-A woke up, still believing it owns PAY-001")
}

func TestToggleKeys(t *testing.T) {
	for _, tc := range []struct{ key, name string }{
		{"a", "atomic-claim"}, {"o", "ownership-check"}, {"k", "fencing"}, {"h", "heartbeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLab(t, "playground", 120, 40, engine.Overrides{})
			before, _ := l.m.frame.Settings.Get(tc.name)
			l.press(tc.key)
			after, _ := l.m.frame.Settings.Get(tc.name)
			if before == after {
				t.Fatalf("%s did not flip %s", tc.key, tc.name)
			}
			l.must(tc.name+" "+engine.OnOff(after)+" ("+tc.key+")", tc.name+" switched "+engine.OnOff(after))
		})
	}
}

// TestLeasingAndClockKeys presses each script's keys on a fresh playground, one step at a time,
// and holds the screen after each step to what it must (and must not) show.
func TestLeasingAndClockKeys(t *testing.T) {
	for name, steps := range map[string][]keyStep{
		"leasing": {
			{keys: []string{"l"}, want: []string{"LEASING OFF", "leasing switched off (from the next action on)"}, not: []string{"LEASING ON"}},
			{keys: []string{"n"}, want: []string{"Worker-A loaded 6 pending rows"}},
			{keys: []string{"l"}, want: []string{"LEASING ON"}},
		},
		"clock": {
			{keys: []string{"+"}, want: []string{"clock 09:00:00.100Z", "clock moved 09:00:00.000Z → 09:00:00.100Z"}},
			{keys: []string{"f"}, want: []string{"no live lease"}},
			{keys: []string{"n", "f"}, want: []string{"clock 09:00:00.601Z"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			newLab(t, "playground", 120, 40, engine.Overrides{}).script(steps...)
		})
	}
}

func TestPlayRunsToTheEndAndStops(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("p")
	l.must("▶ playing")
	if len(l.ticks) != 1 {
		t.Fatalf("p scheduled %d ticks, want 1", len(l.ticks))
	}
	l.tickAll(1000)
	if l.m.play.Playing {
		t.Fatal("auto-play still playing after the scenario is done")
	}
	l.must("VERDICT: PASS", "auto-play stopped", "duplicated messages 0")
}

func TestPlayNeverRunsTwoLoops(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("p", "p", "p")
	if len(l.ticks) != 2 {
		t.Fatalf("%d ticks scheduled, want 2 (one per start)", len(l.ticks))
	}
	l.send(l.ticks[0]) // the first loop's tick: stale
	if l.m.track.Acted() != 0 {
		t.Fatal("a stale tick stepped")
	}
	l.ticks = l.ticks[1:]
	l.tickAll(1)
	if l.m.track.Acted() != 1 || len(l.ticks) != 1 {
		t.Fatalf("after one live tick: steps %d, ticks waiting %d; want 1 and 1", l.m.track.Acted(), len(l.ticks))
	}
}

func TestSpeedKeys(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	d := l.m.play.Interval()
	l.press(">")
	if l.m.play.Interval() >= d {
		t.Fatal("> did not speed up")
	}
	l.press("<", "<")
	if l.m.play.Interval() <= d {
		t.Fatal("< did not slow down")
	}
	l.must("auto-play (p): 1 step/1s")
	for i := 0; i < 10; i++ {
		l.press("<")
	}
	l.must("1 step/2s")
}

func TestResetKey(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("l", "n", "n")
	gen := l.m.gen
	l.press("R")
	if l.m.gen != gen+1 {
		t.Fatalf("gen = %d after R, want %d", l.m.gen, gen+1)
	}
	l.must("LEASING ON", "step 0", "clock 09:00:00.000Z")
	for i := 1; i <= 6; i++ {
		if row := l.row(engine.MessageKey(i)); !strings.Contains(row, "Pending") {
			t.Fatalf("after R, row %d is not Pending: %q", i, row)
		}
	}
}

func TestTabOpensTheNextScenario(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("tab")
	l.must("BEFORE: two workers share a durable outbox", "LEASING OFF", "scenario 2/")
	l.press("n")
	l.must("script 1/", "• 09:00:00.000Z ==")
}

func TestScrollKeys(t *testing.T) {
	l := newLab(t, "playground", 80, 24, engine.Overrides{Messages: 40})
	if !l.m.outbox.Keys.Down.Enabled() {
		t.Fatal("scroll keys off with 40 rows")
	}
	vis := l.m.outbox.Visible()
	l.must("rows 1–")
	l.press("down")
	if l.m.outbox.Offset != 1 {
		t.Fatalf("offset %d after ↓", l.m.outbox.Offset)
	}
	l.press("up", "up")
	if l.m.outbox.Offset != 0 {
		t.Fatalf("offset %d after ↑↑", l.m.outbox.Offset)
	}
	l.press("pgdown")
	if l.m.outbox.Offset != vis-1 {
		t.Fatalf("offset %d after pgdn, want %d", l.m.outbox.Offset, vis-1)
	}
	l.press("pgup")
	if l.m.outbox.Offset != 0 {
		t.Fatalf("offset %d after pgup", l.m.outbox.Offset)
	}
	l.press("end")
	l.must("PAY-040")
	l.mustNot("PAY-001")
	l.press("home")
	l.must("PAY-001")
	// Only the visible rows are rendered.
	if n := strings.Count(l.view(), "PAY-0"); n > vis {
		t.Fatalf("%d rows rendered, %d visible", n, vis)
	}
	// Few rows: the scroll keys are off and the help does not offer them.
	l2 := newLab(t, "playground", 120, 40, engine.Overrides{})
	if l2.m.outbox.Keys.Down.Enabled() {
		t.Fatal("scroll keys on though every row fits")
	}
}

func TestExplainAndHelpKeys(t *testing.T) {
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.must("About this scenario", "No script: every step")
	l.press("i")
	l.mustNot("About this scenario")
	l.press("i")
	l.must("About this scenario")
	l.press("?")
	l.must("crash worker", "fencing on/off", "heartbeat on/off", "atomic claim on/off", "ownership check on/off",
		"clock +100ms", "clock past lease", "next scenario", "reset", "slower", "faster", "pause/wake worker")
	if n := len(strings.Split(l.view(), "\n")); n != 40 {
		t.Fatalf("full help: %d lines, want 40", n)
	}
	l.press("?")
	l.mustNot("pause/wake worker")

	// At 80×24 the explanation has no room until asked for.
	s := newLab(t, "playground", 80, 24, engine.Overrides{})
	s.mustNot("About this scenario")
	s.press("i")
	s.must("About this scenario")
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		l := newLab(t, "playground", 120, 40, engine.Overrides{})
		l.press(k)
		if !l.quit {
			t.Fatalf("%s did not quit", k)
		}
	}
	// q inside several runes stops the rest.
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press("runes:nqn")
	if !l.quit || l.m.track.Acted() != 1 {
		t.Fatalf("nqn: quit %v, steps %d; want true, 1", l.quit, l.m.track.Acted())
	}
}
