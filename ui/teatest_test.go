package ui

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"

	"leaselab/assets"
	"leaselab/engine"
)

// TestProgramSmoke runs the lab as a real Bubble Tea program: it opens, steps, and quits.
func TestProgramSmoke(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := Config{Start: "playground", Scenarios: assets.Names(), Open: opener(t, engine.Overrides{})}
	m := New(ctx, cfg, DefaultStyles(lipgloss.DefaultRenderer()))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	has := func(s string) func([]byte) bool {
		return func(b []byte) bool { return bytes.Contains(b, []byte(s)) }
	}
	opts := []teatest.WaitForOption{teatest.WithDuration(10 * time.Second), teatest.WithCheckInterval(20 * time.Millisecond)}
	teatest.WaitFor(t, tm.Output(), has("PAY-006"), opts...)
	tm.Send(keyMsg("n"))
	teatest.WaitFor(t, tm.Output(), has("Worker-A claimed PAY-001"), opts...)
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	final, ok := tm.FinalModel(t).(Model)
	if !ok || final.steps != 1 || !final.quitting {
		t.Fatalf("final model: ok %v, steps %d, quitting %v", ok, final.steps, final.quitting)
	}
	final.gate.close()
}
