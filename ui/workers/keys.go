package workers

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"

	"leaselab/ui/common"
)

// Keys are the workers pane's keys: those that select a worker, and those that act on
// the selected one (s steps it, x crashes it, r restarts it, z pauses or wakes it), for which
// the pane builds the engine command. They need an open session; s is off while the workers
// run on their own or e runs to the end (setBusy).
type Keys struct {
	Select     key.Binding
	PrevWorker key.Binding
	NextWorker key.Binding
	Step       key.Binding
	Crash      key.Binding
	Restart    key.Binding
	Pause      key.Binding

	busy bool // the workers run on their own, or e runs to the end: s is off
}

// DefaultKeys returns the workers pane's keys.
func DefaultKeys() Keys {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return Keys{
		Select:     b([]string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}, "1–9", "select worker"),
		PrevWorker: b([]string{"left"}, "←", "previous worker"),
		NextWorker: b([]string{"right"}, "→", "next worker"),
		Step:       b([]string{"s"}, "s", "step selected worker"),
		Crash:      b([]string{"x"}, "x", "crash worker"),
		Restart:    b([]string{"r"}, "r", "restart worker"),
		Pause:      b([]string{"z"}, "z", "pause/wake worker"),
	}
}

// setWorkers adjusts the select key's help to the number of workers.
func (k *Keys) setWorkers(n int) {
	switch {
	case n <= 1:
		k.Select.SetHelp("1", "select worker")
	default:
		k.Select.SetHelp(fmt.Sprintf("1–%d", min(n, 9)), "select worker")
	}
}

// setEnabled switches the keys on while a session is open.
func (k *Keys) setEnabled(on bool) {
	for _, b := range []*key.Binding{&k.Select, &k.PrevWorker, &k.NextWorker, &k.Crash, &k.Restart, &k.Pause} {
		b.SetEnabled(on)
	}
	k.Step.SetEnabled(on && !k.busy)
}

// setBusy switches the step key off while the workers run on their own or e runs to the end.
func (k *Keys) setBusy(busy bool) {
	k.busy = busy
	k.Step.SetEnabled(k.Select.Enabled() && !busy)
}

// hint names the keys in the pane's title: "1–2 or ← →".
func (k Keys) hint() string {
	return common.KeyName(k.Select) + " or " + common.KeyNames(k.PrevWorker, k.NextWorker)
}
