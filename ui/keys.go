package ui

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/diagram"
	"leaselab/ui/sqlpane"
	"leaselab/ui/workers"
)

// action is what a key of the shell's own asks the lab to do (quit, play, the free run, the
// scenarios, the overlays, the history). The KeyMap is the only place a key is named: the
// footer, the ? screen, the toggle line and every hint in the status line take the key's name
// from its binding (common.KeyName). A key that asks the engine for a command is no action: it
// carries its command (KeyMap.commands: the step, the toggles of engine.Registry, the clock),
// as the workers pane's keys carry theirs. To add a key: a field in KeyMap with its binding in
// DefaultKeyMap, its command in KeyMap.commands or its action in KeyMap.actions and a case in
// Model.do, and its place in a help group (help.go). A test fails when a binding has neither or
// no place in the ? screen.
type action int

// Actions.
const (
	actNone action = iota
	actPlay
	actFree
	actFinish
	actSlower
	actFaster
	actReset
	actNextScenario
	actPrevScenario
	actExplain
	actTranscript
	actClose
	actHelp
	actOpenOffer
	actQuit
	actBack     // history: one action back (history.go)
	actPrevMark // history: back to the previous marked moment
	actNextMark // history: forward to the next marked moment
	actAnswer   // answer the open question (ui/question)
	actExplore  // search the open scenario's schedules, or open the violation found (explore.go)
	actShare    // the share code of the moment on screen (share.go)
)

// KeyMap is the lab's keys. Each is a key.Binding with its help text; a binding that does not
// apply now is disabled (setFree, setSession, setOverlay), and the screen leaves it
// out.
type KeyMap struct {
	Step key.Binding // the worker's keys (s x r z) are the workers pane's (workers_keys.go)
	// Toggles are the keys of engine.Registry(), in its order. Those only a database with row
	// locks has are off until a frame says the database locks rows (setRowLocks); those of the
	// other groups (InRetries, InRescue) until a frame says the run uses them (setLessonToggles).
	Toggles      [engine.NumRegistry]key.Binding
	Clock        key.Binding
	PastLease    key.Binding
	Play         key.Binding
	Free         key.Binding
	Finish       key.Binding
	Slower       key.Binding
	Faster       key.Binding
	Reset        key.Binding
	NextScenario key.Binding
	PrevScenario key.Binding
	Explain      key.Binding
	Transcript   key.Binding
	Close        key.Binding
	Help         key.Binding
	OpenOffer    key.Binding // a served lab: opens the scenario the teacher offers
	Quit         key.Binding
	Back         key.Binding
	PrevMark     key.Binding
	NextMark     key.Binding
	Answer       key.Binding
	// Explore is on only when the lab can search (Config.Explore).
	Explore key.Binding
	// Share is on only when the lab can make codes (Config.Share).
	Share key.Binding

	free      bool // the workers free-run: the footer shows the keys that still apply
	finishing bool // e runs the scenario to its end
}

// DefaultKeyMap returns the lab's keys. Actions are plain letters: ctrl+digit does not reach a
// Bubble Tea v1 program.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	k := KeyMap{
		Step:         b([]string{" ", "n"}, "space/n", "step"),
		Clock:        b([]string{"+", "="}, "+", "clock +100ms"),
		PastLease:    b([]string{"f"}, "f", "clock past lease"),
		Play:         b([]string{"p"}, "p", "play/pause"),
		Free:         b([]string{"g"}, "g", "free-run on/off"),
		Finish:       b([]string{"e"}, "e", "run to the end at full speed"),
		Slower:       b([]string{"<", ","}, "<", "slower"),
		Faster:       b([]string{">", "."}, ">", "faster"),
		Reset:        b([]string{"R"}, "R", "reset"),
		NextScenario: b([]string{"tab"}, "tab", "next scenario"),
		PrevScenario: b([]string{"shift+tab"}, "shift+tab", "previous scenario"),
		Explain:      b([]string{"i"}, "i", "explanation"),
		Transcript:   b([]string{"w"}, "w", "write transcript (.md)"),
		Close:        b([]string{"esc"}, "esc", "close ? or the explanation"),
		Help:         b([]string{"?"}, "?", "all keys"),
		OpenOffer:    b([]string{"O"}, "O", "open the scenario the teacher offers"),
		Quit:         b([]string{"q", "ctrl+c"}, "q/ctrl+c", "quit"),
		Back:         b([]string{"b"}, "b", "step back: the database as it was"),
		PrevMark:     b([]string{"["}, "[", "back to the previous crash, reclaim or rejection"),
		NextMark:     b([]string{"]"}, "]", "forward to the next one, along the recorded future"),
		Answer:       b([]string{"A", "B", "C", "D"}, "A–D", "answer the question"),
		Explore:      b([]string{"X"}, "X", "explore its schedules"),
		Share:        b([]string{"S"}, "S", "share code"),
	}
	for i, t := range engine.Registry() {
		k.Toggles[i] = b([]string{t.Key}, t.Key, t.Help())
	}
	k.Close.SetEnabled(false)     // nothing to close yet
	k.OpenOffer.SetEnabled(false) // nothing offered yet
	k.Answer.SetEnabled(false)    // no question open yet
	k.Explore.SetEnabled(false)   // until New has a Config.Explore
	k.Share.SetEnabled(false)     // until New has a Config.Share
	k.setRowLocks(false)          // until a frame says the database locks rows
	k.setLessonToggles(nil)       // until a frame says the run uses them
	return k
}

// keyAction pairs a binding with its action.
type keyAction struct {
	binding key.Binding
	act     action
}

// actions lists every binding with its action, in the order keys are matched.
func (k KeyMap) actions() []keyAction {
	return []keyAction{
		{k.Quit, actQuit}, {k.Play, actPlay}, {k.Free, actFree}, {k.Finish, actFinish}, {k.Slower, actSlower}, {k.Faster, actFaster},
		{k.Reset, actReset}, {k.NextScenario, actNextScenario}, {k.PrevScenario, actPrevScenario},
		{k.Explain, actExplain}, {k.Transcript, actTranscript}, {k.Close, actClose}, {k.Help, actHelp},
		{k.OpenOffer, actOpenOffer},
		{k.Back, actBack}, {k.PrevMark, actPrevMark}, {k.NextMark, actNextMark}, {k.Answer, actAnswer},
		{k.Explore, actExplore}, {k.Share, actShare},
	}
}

// commandKey pairs a binding with the engine command its key asks for.
type commandKey struct {
	binding key.Binding
	cmd     engine.Command
}

// commands lists the keys that ask the engine for a command, each with its command (the
// workers' keys are the workers pane's): the step, the toggles of the registry, the clock.
func (k KeyMap) commands() []commandKey {
	cks := []commandKey{{k.Step, engine.CmdNext{}}}
	for i, t := range engine.Registry() {
		cks = append(cks, commandKey{k.Toggles[i], engine.CmdToggle{Name: t.Name}})
	}
	return append(cks, commandKey{k.Clock, engine.CmdClock{Delta: clockStep}}, commandKey{k.PastLease, engine.CmdPastLease{}})
}

// command finds the command of the binding msg matches: on is false when only a binding that is
// off now matches (the lab then says why, from the command); ok is false when none does.
func (k KeyMap) command(msg tea.KeyMsg) (c engine.Command, on, ok bool) {
	for _, ck := range k.commands() {
		if key.Matches(msg, ck.binding) {
			return ck.cmd, true, true
		}
	}
	for _, ck := range k.commands() {
		if slices.Contains(ck.binding.Keys(), msg.String()) {
			return ck.cmd, false, true
		}
	}
	return nil, false, false
}

// Command is the engine command the lab's key called name asks for (the step, a toggle, the
// clock), by the name its binding spells (" ", "l", "+"), whether or not the binding is on now;
// ok is false for a key that asks for none. leaselab --plain (ui/plain) takes its keys from
// here, so that they are the lab's.
func (k KeyMap) Command(name string) (c engine.Command, ok bool) {
	for _, ck := range k.commands() {
		if slices.Contains(ck.binding.Keys(), name) {
			return ck.cmd, true
		}
	}
	return nil, false
}

// match finds the action of the binding that matches msg. on is false when only a binding that
// is off now matches: the lab then says why it does nothing.
func (k KeyMap) match(msg tea.KeyMsg) (act action, on bool) { return matchAction(msg, k.actions()) }

// matchAction finds the action of the first enabled binding among kas that matches msg, or else
// of the first disabled one (on is then false).
func matchAction(msg tea.KeyMsg, kas []keyAction) (act action, on bool) {
	for _, ka := range kas {
		if key.Matches(msg, ka.binding) {
			return ka.act, true
		}
	}
	s := msg.String()
	for _, ka := range kas {
		for _, k := range ka.binding.Keys() {
			if k == s {
				return ka.act, false
			}
		}
	}
	return actNone, false
}

// ShortHelp is the footer's keys (help.KeyMap), the ones that apply now.
func (k labKeys) ShortHelp() []key.Binding {
	var bs []key.Binding
	for _, it := range k.footItems("") {
		bs = append(bs, it.bs...)
	}
	return bs
}

// labKeys are the lab's keys on the ? screen: the shell's and those of its panes.
type labKeys struct {
	KeyMap
	scroll  common.ScrollKeys // the outbox's
	diagram diagram.Keys
	sql     sqlpane.Keys
	workers workers.Keys
}

// FullHelp is the ? screen's keys (help.KeyMap), in its groups.
func (k labKeys) FullHelp() [][]key.Binding {
	var groups [][]key.Binding
	for _, g := range k.helpGroups() {
		var bs []key.Binding
		for _, e := range g.entries {
			bs = append(bs, e.bs...)
		}
		groups = append(groups, bs)
	}
	return groups
}

// pressEach splits a key message of several runes (fast typing, tmux send-keys) into a press
// of each, handled by key in turn until done; ok is false for a message of one key.
func pressEach[M any](m M, k tea.KeyMsg, key func(M, tea.KeyMsg) (M, tea.Cmd), done func(M) bool) (_ M, _ tea.Cmd, ok bool) {
	if k.Type != tea.KeyRunes || len(k.Runes) <= 1 {
		return m, nil, false
	}
	cmds := make([]tea.Cmd, 0, len(k.Runes))
	for _, r := range k.Runes {
		one := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}
		if r == ' ' {
			one.Type = tea.KeySpace
		}
		var cmd tea.Cmd
		m, cmd = key(m, one)
		cmds = append(cmds, cmd)
		if done(m) {
			break
		}
	}
	return m, tea.Batch(cmds...), true
}
