package plain

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"

	"leaselab/engine"
	"leaselab/ui"
	"leaselab/ui/workers"
)

// Plain mode's keys are the lab's: its key map (ui.KeyMap: the step, the toggles, the clock,
// step back, the answers, ?, q) and the workers pane's (select, and s x r z on the selected
// worker). A key is named as the lab's bindings name it: " " (space), "n", "left", "esc".

// keys are the bindings plain mode acts on.
type keys struct {
	lab ui.KeyMap
	wk  workers.Keys
	// redrive is the dead letters pane's V (ui/deadletters): the next dead letter back to Pending.
	redrive key.Binding
}

func defaultKeys() keys {
	return keys{lab: ui.DefaultKeyMap(), wk: workers.DefaultKeys(),
		redrive: key.NewBinding(key.WithKeys("V"), key.WithHelp("V", "redrive a dead letter: back to Pending, attempts reset; each press the next"))}
}

// is reports whether name is one of b's keys (on or off: plain mode decides itself what
// applies now).
func is(b key.Binding, name string) bool { return slices.Contains(b.Keys(), name) }

// workerCommand is the command of a key that acts on the selected worker w (s x r z).
func (k keys) workerCommand(name string, w int) (engine.Command, bool) {
	switch {
	case is(k.wk.Step, name):
		return engine.CmdStepWorker{Worker: w}, true
	case is(k.wk.Crash, name):
		return engine.CmdCrash{Worker: w}, true
	case is(k.wk.Restart, name):
		return engine.CmdRestart{Worker: w}, true
	case is(k.wk.Pause, name):
		return engine.CmdPause{Worker: w}, true
	}
	return nil, false
}

// answer is the answer a key gives (A: 0, B: 1, …), -1 for a key that is no answer.
func (k keys) answer(name string) int { return slices.Index(k.lab.Answer.Keys(), name) }

// toggleOn reports whether the toggle called name is one of this run's: the lab's own always
// (those of a database with row locks only on one), the other groups' where the run uses them.
func toggleOn(name string, rowLocks bool, lesson []string) bool {
	t, ok := engine.LookupToggle(name)
	switch {
	case !ok:
		return false
	case t.Where == engine.InLab:
		return t.Has(rowLocks)
	}
	return slices.Contains(lesson, name)
}

// helpLines are the keys that act now, each with what it does, as ? prints them.
func (k keys) helpLines(rowLocks bool, lesson []string, question bool) []string {
	line := func(b key.Binding) string { return b.Help().Key + ": " + b.Help().Desc }
	if question {
		return []string{
			k.lab.Answer.Help().Key + ": " + k.lab.Answer.Help().Desc,
			k.lab.Close.Help().Key + ": skip the question (the step runs, unscored)",
			line(k.lab.Help), line(k.lab.Quit),
			"every other key waits for the answer",
		}
	}
	out := []string{line(k.lab.Step)}
	for i, t := range engine.Registry() {
		if toggleOn(t.Name, rowLocks, lesson) {
			out = append(out, line(k.lab.Toggles[i]))
		}
	}
	out = append(out, line(k.lab.Clock), line(k.lab.PastLease),
		line(k.wk.Select), line(k.wk.PrevWorker), line(k.wk.NextWorker),
		line(k.wk.Step), line(k.wk.Crash), line(k.wk.Restart), line(k.wk.Pause),
		line(k.redrive)+" (when a row is DeadLettered)",
		line(k.lab.Back), k.lab.Explain.Help().Key+": the explanation again, and every row and worker as they stand",
		k.lab.Answer.Help().Key+": "+k.lab.Answer.Help().Desc+" (when one is asked)",
		line(k.lab.Help), line(k.lab.Quit))
	return out
}
