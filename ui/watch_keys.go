package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// WatchKeyMap is the watch's keys: it only reads, so it has no engine keys. Like the lab's
// KeyMap it is the only place the watch names a key.
type WatchKeyMap struct {
	Pause    key.Binding
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Close    key.Binding
	Help     key.Binding
	Quit     key.Binding
}

// DefaultWatchKeyMap returns the watch's keys, the lab's letters where they mean the same.
func DefaultWatchKeyMap() WatchKeyMap {
	k := DefaultKeyMap()
	w := WatchKeyMap{
		Pause: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause/resume polling")),
		Up:    k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown, Top: k.Top, Bottom: k.Bottom,
		Close: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close ?")),
		Help:  k.Help, Quit: k.Quit,
	}
	w.Close.SetEnabled(false)
	return w
}

// actions lists every binding with its action, in the order keys are matched.
func (k WatchKeyMap) actions() []keyAction {
	return []keyAction{
		{k.Quit, actQuit}, {k.Pause, actPlay},
		{k.Up, actUp}, {k.Down, actDown}, {k.PageUp, actPageUp}, {k.PageDown, actPageDown},
		{k.Top, actTop}, {k.Bottom, actBottom}, {k.Close, actClose}, {k.Help, actHelp},
	}
}

// match finds the action of an enabled binding that matches msg; actNone for any other key.
func (k WatchKeyMap) match(msg tea.KeyMsg) action {
	if act, on := matchAction(msg, k.actions()); on {
		return act
	}
	return actNone
}

// setScroll switches the scroll keys on when the table has more rows than it shows.
func (k *WatchKeyMap) setScroll(on bool) {
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom} {
		b.SetEnabled(on)
	}
}

// ShortHelp is the watch's footer (help.KeyMap).
func (k WatchKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Pause, k.Up, k.Down, k.PageDown, k.Close, k.Help, k.Quit}
}

// FullHelp is the watch's ? screen (help.KeyMap).
func (k WatchKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Pause, k.Help, k.Close, k.Quit}, {k.Up, k.Down, k.PageUp}, {k.PageDown, k.Top, k.Bottom}}
}
