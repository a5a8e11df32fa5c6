package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"

	"leaselab/ui/common"
)

// workersKeys are the workers pane's keys: they select the worker the lab's s, x, r and z act
// on. They need an open session.
type workersKeys struct {
	Select     key.Binding
	PrevWorker key.Binding
	NextWorker key.Binding
	// acts are the lab's keys for the selected worker, named by the note on a selection.
	step, crash, restart key.Binding
}

// defaultWorkersKeys returns the workers pane's keys.
func defaultWorkersKeys() workersKeys {
	lab := DefaultKeyMap()
	return workersKeys{
		Select: key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6", "7", "8", "9"),
			key.WithHelp("1–9", "select worker")),
		PrevWorker: key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "previous worker")),
		NextWorker: key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "next worker")),
		step:       lab.StepWorker, crash: lab.Crash, restart: lab.Restart,
	}
}

// setWorkers adjusts the select key's help to the number of workers.
func (k *workersKeys) setWorkers(n int) {
	switch {
	case n <= 1:
		k.Select.SetHelp("1", "select worker")
	default:
		k.Select.SetHelp(fmt.Sprintf("1–%d", min(n, 9)), "select worker")
	}
}

// setEnabled switches the keys on while a session is open.
func (k *workersKeys) setEnabled(on bool) {
	for _, b := range []*key.Binding{&k.Select, &k.PrevWorker, &k.NextWorker} {
		b.SetEnabled(on)
	}
}

// hint names the keys in the pane's title: "1–2 or ← →".
func (k workersKeys) hint() string {
	return common.KeyName(k.Select) + " or " + common.KeyNames(k.PrevWorker, k.NextWorker)
}
