package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// ScrollKeys are the keys of a pane that scrolls: the outbox table (the lab's and the watch's)
// and the SQL pane. Each such pane holds its own copy, so that one can be on while the other
// has nothing to scroll.
type ScrollKeys struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
}

// DefaultScrollKeys returns the scroll keys, on.
func DefaultScrollKeys() ScrollKeys {
	b := func(k, name, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(k), key.WithHelp(name, desc))
	}
	return ScrollKeys{
		Up:       b("up", "↑", "scroll up"),
		Down:     b("down", "↓", "scroll down"),
		PageUp:   b("pgup", "pgup", "page up"),
		PageDown: b("pgdown", "pgdn", "page down"),
		Top:      b("home", "home", "first row"),
		Bottom:   b("end", "end", "last row"),
	}
}

// bindings are the keys in the order the ? screen names them.
func (k ScrollKeys) bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}
}

// actions pairs each key with its scroll action.
func (k ScrollKeys) actions() []keyAction {
	return []keyAction{{k.Up, actUp}, {k.Down, actDown}, {k.PageUp, actPageUp}, {k.PageDown, actPageDown},
		{k.Top, actTop}, {k.Bottom, actBottom}}
}

// match finds the scroll action of msg; on is false when the key is one of them but off now.
func (k ScrollKeys) match(msg tea.KeyMsg) (act action, on bool) { return matchAction(msg, k.actions()) }

// setEnabled switches the keys on or off: on when the pane has more rows than it shows.
func (k *ScrollKeys) setEnabled(on bool) {
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom} {
		b.SetEnabled(on)
	}
}

// ShortHelp is the keys a footer names (help.KeyMap).
func (k ScrollKeys) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.PageDown} }

// FullHelp is the keys in two columns (help.KeyMap).
func (k ScrollKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp}, {k.PageDown, k.Top, k.Bottom}}
}
