package ui

import "github.com/charmbracelet/bubbles/key"

// sqlKeys are the SQL pane's keys.
type sqlKeys struct {
	Toggle key.Binding
	Close  key.Binding // on while the pane is open, as are its scroll keys
	scroll ScrollKeys
	step   key.Binding // the lab's, named by the pane's note before any action ran SQL
}

// defaultSQLKeys returns the SQL pane's keys.
func defaultSQLKeys() sqlKeys {
	return sqlKeys{
		Toggle: key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "SQL of each action")),
		Close:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close the SQL pane")),
		scroll: DefaultScrollKeys(),
		step:   DefaultKeyMap().Step,
	}
}
