package sqlpane

import (
	"github.com/charmbracelet/bubbles/key"

	"leaselab/ui/common"
)

// Keys are the SQL pane's keys.
type Keys struct {
	Toggle key.Binding
	Close  key.Binding // on while the pane is open, as are its scroll keys
	scroll common.ScrollKeys
	step   key.Binding // the lab's, named by the pane's note before any action ran SQL
}

// DefaultKeys returns the SQL pane's keys; step is the lab's step key, which its note names.
func DefaultKeys(step key.Binding) Keys {
	return Keys{
		Toggle: key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "SQL of each action")),
		Close:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close the SQL pane")),
		scroll: common.DefaultScrollKeys(),
		step:   step,
	}
}
