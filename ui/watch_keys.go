package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/ui/common"
)

// WatchKeyMap is the watch's own keys: it only reads, so it has no engine keys; the outbox
// table scrolls on its own keys (common.ScrollKeys). Like the lab's KeyMap it is the only place the
// watch names a key.
type WatchKeyMap struct {
	Pause key.Binding
	Close key.Binding
	Help  key.Binding
	Quit  key.Binding
}

// DefaultWatchKeyMap returns the watch's keys, the lab's letters where they mean the same.
func DefaultWatchKeyMap() WatchKeyMap {
	k := DefaultKeyMap()
	w := WatchKeyMap{
		Pause: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause/resume polling")),
		Close: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close ?")),
		Help:  k.Help, Quit: k.Quit,
	}
	w.Close.SetEnabled(false)
	return w
}

// actions lists every binding with its action, in the order keys are matched.
func (k WatchKeyMap) actions() []keyAction {
	return []keyAction{{k.Quit, actQuit}, {k.Pause, actPlay}, {k.Close, actClose}, {k.Help, actHelp}}
}

// match finds the action of an enabled binding that matches msg; actNone for any other key.
func (k WatchKeyMap) match(msg tea.KeyMsg) action {
	if act, on := matchAction(msg, k.actions()); on {
		return act
	}
	return actNone
}

// watchKeys are the watch's keys on its footer and ? screen: its own and the outbox's.
type watchKeys struct {
	WatchKeyMap
	scroll common.ScrollKeys
	panes  []common.Pane // the registered panes'
}

// ShortHelp is the watch's footer (help.KeyMap).
func (k watchKeys) ShortHelp() []key.Binding {
	bs := append(append([]key.Binding{k.Pause}, k.scroll.ShortHelp()...), k.Close, k.Help, k.Quit)
	for _, p := range k.panes {
		bs = append(bs, p.ShortHelp()...)
	}
	return bs
}

// FullHelp is the watch's ? screen (help.KeyMap).
func (k watchKeys) FullHelp() [][]key.Binding {
	cols := append([][]key.Binding{{k.Pause, k.Help, k.Close, k.Quit}}, k.scroll.FullHelp()...)
	for _, p := range k.panes {
		cols = append(cols, p.FullHelp()...)
	}
	return cols
}
