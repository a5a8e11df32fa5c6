package ui

import (
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
)

// In a real Bubble Tea program: e runs the playground to its verdict, shift+tab opens the
// previous scenario, ? lists ctrl+c and esc closes it, and ctrl+c quits.
func TestProgramStageKeys(t *testing.T) {
	tm, opts := startProgram(t, 10*time.Second)
	teatest.WaitFor(t, tm.Output(), has("PAY-006"), opts...)
	tm.Send(keyMsg("e"))
	// One read of the output holds both: each WaitFor consumes what it read.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return has("ran to the end at full speed")(b) && has("VERDICT: PASS")(b)
	}, opts...)
	tm.Send(keyMsg("?"))
	teatest.WaitFor(t, tm.Output(), has("q/ctrl+c quit"), opts...)
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	teatest.WaitFor(t, tm.Output(), has("space step"), opts...) // the footer is back
	tm.Send(tea.KeyMsg{Type: tea.KeyShiftTab})
	// The status "previous scenario: opening …" may last less than a frame, and the renderer
	// paints only the last state of a frame (a loaded CI machine missed it once): wait for the
	// status or for the previous scenario, the last in the tab order, opened. The header drops
	// the word "scenario" before "N/N (tab)" when the lesson's title is long (stale-delete's is
	// at 120 columns), so the position alone is what is waited for.
	n := len(sqliteLessons())
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return has("previous scenario: opening")(b) || has(fmt.Sprintf(" %d/%d (tab)", n, n))(b)
	}, opts...)
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	final, ok := tm.FinalModel(t).(Model)
	if !ok || !final.quitting || final.showHelp || final.target == "playground" {
		t.Fatalf("final model: ok %v, quitting %v, ? open %v, scenario %s", ok, final.quitting, final.showHelp, final.target)
	}
	if final.finish.actions == 0 || final.finish.on {
		t.Fatalf("e: %d actions, still running %v", final.finish.actions, final.finish.on)
	}
	final.gate.close()
}
