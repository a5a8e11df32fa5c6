package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// action is what a key asks the lab to do. To add a key: a field in KeyMap, its binding in
// DefaultKeyMap, a row in KeyMap.actions, a place in the help groups, and a case in
// Model.do.
type action int

// Actions.
const (
	actNone action = iota
	actStep
	actStepWorker
	actSelect
	actPrevWorker
	actNextWorker
	actCrash
	actRestart
	actPause
	actLeasing
	actAtomicClaim
	actOwnership
	actFencing
	actHeartbeat
	actClock
	actPastLease
	actPlay
	actFree
	actSlower
	actFaster
	actReset
	actNextScenario
	actUp
	actDown
	actPageUp
	actPageDown
	actTop
	actBottom
	actExplain
	actHelp
	actQuit
)

// KeyMap is the lab's keys. Each is a key.Binding with its help text.
type KeyMap struct {
	Step           key.Binding
	StepWorker     key.Binding
	Select         key.Binding
	PrevWorker     key.Binding
	NextWorker     key.Binding
	Crash          key.Binding
	Restart        key.Binding
	Pause          key.Binding
	Leasing        key.Binding
	AtomicClaim    key.Binding
	OwnershipCheck key.Binding
	Fencing        key.Binding
	Heartbeat      key.Binding
	Clock          key.Binding
	PastLease      key.Binding
	Play           key.Binding
	Free           key.Binding
	Slower         key.Binding
	Faster         key.Binding
	Reset          key.Binding
	NextScenario   key.Binding
	Up             key.Binding
	Down           key.Binding
	PageUp         key.Binding
	PageDown       key.Binding
	Top            key.Binding
	Bottom         key.Binding
	Explain        key.Binding
	Help           key.Binding
	Quit           key.Binding

	free bool // the workers free-run: the footer shows the keys that still apply
}

// DefaultKeyMap returns the lab's keys. Actions are plain letters: ctrl+digit does not reach a
// Bubble Tea v1 program.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return KeyMap{
		Step:           b([]string{" ", "n"}, "space/n", "step"),
		StepWorker:     b([]string{"s"}, "s", "step selected worker"),
		Select:         b([]string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}, "1–9", "select worker"),
		PrevWorker:     b([]string{"left"}, "←", "previous worker"),
		NextWorker:     b([]string{"right"}, "→", "next worker"),
		Crash:          b([]string{"x"}, "x", "crash worker"),
		Restart:        b([]string{"r"}, "r", "restart worker"),
		Pause:          b([]string{"z"}, "z", "pause/wake worker"),
		Leasing:        b([]string{"l"}, "l", "leasing on/off"),
		AtomicClaim:    b([]string{"a"}, "a", "atomic claim on/off"),
		OwnershipCheck: b([]string{"o"}, "o", "ownership check on/off"),
		Fencing:        b([]string{"k"}, "k", "fencing on/off"),
		Heartbeat:      b([]string{"h"}, "h", "heartbeat on/off"),
		Clock:          b([]string{"+", "="}, "+", "clock +100ms"),
		PastLease:      b([]string{"f"}, "f", "clock past lease"),
		Play:           b([]string{"p"}, "p", "play/pause"),
		Free:           b([]string{"g"}, "g", "free-run on/off"),
		Slower:         b([]string{"<", ","}, "<", "slower"),
		Faster:         b([]string{">", "."}, ">", "faster"),
		Reset:          b([]string{"R"}, "R", "reset"),
		NextScenario:   b([]string{"tab"}, "tab", "next scenario"),
		Up:             b([]string{"up"}, "↑", "scroll up"),
		Down:           b([]string{"down"}, "↓", "scroll down"),
		PageUp:         b([]string{"pgup"}, "pgup", "page up"),
		PageDown:       b([]string{"pgdown"}, "pgdn", "page down"),
		Top:            b([]string{"home"}, "home", "first row"),
		Bottom:         b([]string{"end"}, "end", "last row"),
		Explain:        b([]string{"i"}, "i", "explanation"),
		Help:           b([]string{"?"}, "?", "all keys"),
		Quit:           b([]string{"q", "ctrl+c"}, "q", "quit"),
	}
}

// keyAction pairs a binding with its action.
type keyAction struct {
	binding key.Binding
	act     action
}

// actions lists every binding with its action, in the order keys are matched.
func (k KeyMap) actions() []keyAction {
	return []keyAction{
		{k.Quit, actQuit}, {k.Step, actStep}, {k.StepWorker, actStepWorker}, {k.Select, actSelect},
		{k.PrevWorker, actPrevWorker}, {k.NextWorker, actNextWorker},
		{k.Crash, actCrash}, {k.Restart, actRestart}, {k.Pause, actPause},
		{k.Leasing, actLeasing}, {k.AtomicClaim, actAtomicClaim}, {k.OwnershipCheck, actOwnership},
		{k.Fencing, actFencing}, {k.Heartbeat, actHeartbeat},
		{k.Clock, actClock}, {k.PastLease, actPastLease},
		{k.Play, actPlay}, {k.Free, actFree}, {k.Slower, actSlower}, {k.Faster, actFaster},
		{k.Reset, actReset}, {k.NextScenario, actNextScenario},
		{k.Up, actUp}, {k.Down, actDown}, {k.PageUp, actPageUp}, {k.PageDown, actPageDown},
		{k.Top, actTop}, {k.Bottom, actBottom},
		{k.Explain, actExplain}, {k.Help, actHelp},
	}
}

// match finds the action of an enabled binding that matches msg.
func (k KeyMap) match(msg tea.KeyMsg) action { return matchAction(msg, k.actions()) }

// matchAction finds the action of the first enabled binding among kas that matches msg.
func matchAction(msg tea.KeyMsg, kas []keyAction) action {
	for _, ka := range kas {
		if key.Matches(msg, ka.binding) {
			return ka.act
		}
	}
	return actNone
}

// setWorkers adjusts the worker keys' help to the number of workers.
func (k *KeyMap) setWorkers(n int) {
	switch {
	case n <= 1:
		k.Select.SetHelp("1", "select worker")
	default:
		k.Select.SetHelp(fmt.Sprintf("1–%d", min(n, 9)), "select worker")
	}
}

// setScroll switches the scroll keys on when the table has more rows than it shows.
func (k *KeyMap) setScroll(on bool) {
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom} {
		b.SetEnabled(on)
	}
}

// setSession switches off the keys that need an open session (after a scenario failed to open).
func (k *KeyMap) setSession(open bool) {
	for _, b := range []*key.Binding{&k.Step, &k.StepWorker, &k.Select, &k.PrevWorker, &k.NextWorker,
		&k.Crash, &k.Restart, &k.Pause, &k.Leasing, &k.AtomicClaim, &k.OwnershipCheck, &k.Fencing,
		&k.Heartbeat, &k.Clock, &k.PastLease, &k.Play, &k.Free, &k.Slower, &k.Faster} {
		b.SetEnabled(open)
	}
}

// setFree switches the keys between stepping and free-running: while the workers run on their
// own, nothing may step them (space, s, p are off), g stops them and < > set their pace.
func (k *KeyMap) setFree(on bool) {
	k.free = on
	for _, b := range []*key.Binding{&k.Step, &k.StepWorker, &k.Play} {
		b.SetEnabled(!on)
	}
	if on {
		k.Free.SetHelp("g", "stop free run")
		k.Slower.SetHelp("<", "slower pace")
		k.Faster.SetHelp(">", "faster pace")
		return
	}
	k.Free.SetHelp("g", "free-run on/off")
	k.Slower.SetHelp("<", "slower")
	k.Faster.SetHelp(">", "faster")
}

// ShortHelp is the footer: the keys of the workshop's five minutes; while the workers free-run,
// g (which stops them) first and the keys that still act on them.
func (k KeyMap) ShortHelp() []key.Binding {
	if k.free {
		return []key.Binding{k.Free, k.Select, k.Crash, k.Restart, k.Pause, k.PastLease, k.Clock, k.Slower, k.Faster, k.Help, k.Quit}
	}
	return []key.Binding{k.Step, k.Select, k.Crash, k.Restart, k.Leasing, k.PastLease, k.Clock, k.Play, k.Free, k.Help, k.Quit}
}

// FullHelp is the ? screen, in groups.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Step, k.StepWorker, k.Select, k.PrevWorker, k.NextWorker},
		{k.Crash, k.Restart, k.Pause, k.Clock, k.PastLease},
		{k.Leasing, k.AtomicClaim, k.OwnershipCheck, k.Fencing, k.Heartbeat},
		{k.Play, k.Free, k.Slower, k.Faster, k.Reset, k.NextScenario},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Explain, k.Help, k.Quit},
	}
}

// WatchKeyMap is the watch's keys: it only reads, so it has no engine keys.
type WatchKeyMap struct {
	Pause    key.Binding
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Help     key.Binding
	Quit     key.Binding
}

// DefaultWatchKeyMap returns the watch's keys, the lab's letters where they mean the same.
func DefaultWatchKeyMap() WatchKeyMap {
	k := DefaultKeyMap()
	return WatchKeyMap{
		Pause: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause/resume polling")),
		Up:    k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown, Top: k.Top, Bottom: k.Bottom,
		Help: k.Help, Quit: k.Quit,
	}
}

// actions lists every binding with its action, in the order keys are matched.
func (k WatchKeyMap) actions() []keyAction {
	return []keyAction{
		{k.Quit, actQuit}, {k.Pause, actPlay},
		{k.Up, actUp}, {k.Down, actDown}, {k.PageUp, actPageUp}, {k.PageDown, actPageDown},
		{k.Top, actTop}, {k.Bottom, actBottom}, {k.Help, actHelp},
	}
}

// match finds the action of an enabled binding that matches msg.
func (k WatchKeyMap) match(msg tea.KeyMsg) action { return matchAction(msg, k.actions()) }

// setScroll switches the scroll keys on when the table has more rows than it shows.
func (k *WatchKeyMap) setScroll(on bool) {
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Top, &k.Bottom} {
		b.SetEnabled(on)
	}
}

// ShortHelp is the watch's footer.
func (k WatchKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Pause, k.Up, k.Down, k.PageDown, k.Help, k.Quit}
}

// FullHelp is the watch's ? screen.
func (k WatchKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Pause, k.Help, k.Quit}, {k.Up, k.Down, k.PageUp}, {k.PageDown, k.Top, k.Bottom}}
}
