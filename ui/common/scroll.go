package common

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

// Bindings are the keys in the order the ? screen names them.
func (k ScrollKeys) Bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}
}

// Scroll is where a view of n lines, h of them on screen from line at, starts after msg: a
// line or a page up or down, the top or the bottom (the caller keeps it in range). ok is false
// when msg is none of the keys that are on now.
func (k ScrollKeys) Scroll(msg tea.KeyMsg, at, n, h int) (to int, ok bool) {
	page := max(1, h-1)
	moves := []struct {
		b  key.Binding
		to int
	}{{k.Up, at - 1}, {k.Down, at + 1}, {k.PageUp, at - page}, {k.PageDown, at + page}, {k.Top, 0}, {k.Bottom, n}}
	for _, m := range moves {
		if key.Matches(msg, m.b) {
			return m.to, true
		}
	}
	return at, false
}

// SetEnabled switches the keys on or off: on when the pane has more rows than it shows.
func (k *ScrollKeys) SetEnabled(on bool) {
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
