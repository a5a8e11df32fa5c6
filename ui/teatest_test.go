package ui

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"

	"leaselab/engine"
	"leaselab/ui/common"
)

// startProgram runs the lab on the playground as a real Bubble Tea program at 120×40, and
// returns it with the options of a wait of up to wait for its output.
func startProgram(t *testing.T, wait time.Duration) (*teatest.TestModel, []teatest.WaitForOption) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := Config{Start: "playground", Scenarios: sqliteLessons(), Open: opener(t, engine.Overrides{})}
	m := New(ctx, cfg, common.DefaultStyles(lipgloss.DefaultRenderer()))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	return tm, []teatest.WaitForOption{teatest.WithDuration(wait), teatest.WithCheckInterval(20 * time.Millisecond)}
}

// has matches program output that contains s.
func has(s string) func([]byte) bool {
	return func(b []byte) bool { return bytes.Contains(b, []byte(s)) }
}

// TestProgramSmoke runs the lab as a real Bubble Tea program: it opens, steps, and quits.
func TestProgramSmoke(t *testing.T) {
	tm, opts := startProgram(t, 10*time.Second)
	teatest.WaitFor(t, tm.Output(), has("PAY-006"), opts...)
	tm.Send(keyMsg("n"))
	teatest.WaitFor(t, tm.Output(), has("Worker-A claimed PAY-001"), opts...)
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	final, ok := tm.FinalModel(t).(Model)
	if !ok || final.track.Acted() != 1 || !final.quitting {
		t.Fatalf("final model: ok %v, steps %d, quitting %v", ok, final.track.Acted(), final.quitting)
	}
	final.gate.close()
}

// TestProgramFreeRun runs g mode in a real Bubble Tea program, where commands run on their own
// goroutines beside the free-running workers: start, crash a worker, move the clock until every
// row is processed, stop, step once more, and quit.
func TestProgramFreeRun(t *testing.T) {
	tm, opts := startProgram(t, 15*time.Second)
	teatest.WaitFor(t, tm.Output(), has("PAY-006"), opts...)
	// < and > set the free run's pace before g too: from a minute's 5 s to 100 ms.
	for i := 0; i < 5; i++ {
		tm.Send(keyMsg(">"))
	}
	teatest.WaitFor(t, tm.Output(), has("free run (g): pace 100ms"), opts...)
	tm.Send(keyMsg("g"))
	teatest.WaitFor(t, tm.Output(), has("FREE-RUNNING"), opts...)
	tm.Send(keyMsg("x"))
	teatest.WaitFor(t, tm.Output(), has("CRASHED"), opts...)
	// Whatever Worker-A held stays leased until the clock passes it: f, a few times.
	for i := 0; i < 6; i++ {
		time.Sleep(150 * time.Millisecond)
		tm.Send(keyMsg("f"))
	}
	teatest.WaitFor(t, tm.Output(), has("processed 6/6"), opts...)
	tm.Send(keyMsg("g"))
	teatest.WaitFor(t, tm.Output(), has("stopped: every worker finished"), opts...)
	tm.Send(keyMsg("n"))
	// Stepping again: a last empty claim, or the verdict when every worker is already idle.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return has("nothing left to claim")(b) || has("the scenario is done")(b) }, opts...)
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	final, ok := tm.FinalModel(t).(Model)
	if !ok || !final.quitting || final.runner.running() {
		t.Fatalf("final model: ok %v, quitting %v, free run %v", ok, final.quitting, final.runner.running())
	}
	final.gate.close()
}
