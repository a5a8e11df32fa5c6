// Package common is what the panes of the lab and the watch share: the contract between a
// shell and its panes (Scene, Pane, what a pane asks of its shell), the styles, the text
// helpers, the scroll keys, the event line, and the frame a pane draws from.
package common

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
)

// The contract between a shell and its panes: what a pane draws from, what it implements, and
// what it may ask of its shell.

// Scene is what every pane draws from: the last frame read, what changed in it, the styles.
type Scene struct {
	Frame   *Frame
	Changes Changes
	Styles  *Styles
}

// Pane is a component a shell holds without knowing its type: the panes registered in
// panes.go. Like a bubbles component it is a value: Update and SetSize return the Pane anew.
type Pane interface {
	help.KeyMap // its keys: matched by it alone, and listed on the ? screen under its name
	// Update takes a message: a key that matches one of its enabled bindings, or any message
	// the shell does not know (those of the pane's own commands). out is what the pane asks of
	// the shell, at once: nil, a NoteMsg, a DoMsg, a CmdMsg, a NeedsSessionMsg or a StepOffMsg.
	Update(msg tea.Msg, s Scene) (_ Pane, out tea.Msg)
	// SetSize gives the pane its width and height (0: not on screen).
	SetSize(w, h int) Pane
	// Want is how many lines the pane would take at width w: the layout gives it up to that
	// many once the built-in panes have theirs.
	Want(s Scene, w int) int
	// View draws the pane in exactly the size it was given.
	View(s Scene) string
}

// Pinner is a registered pane that also implements Pinned: while Pinned says so, the narrow
// layout gives it its lines before the optional lines of the built-in panes (the titles, the
// second worker), since its key acts on what only it shows (the dead letters' V).
type Pinner interface{ Pinned(s Scene) bool }

// What a pane asks of its shell (the out message of Update). The shell takes it in the same
// Update, so that a key's effect never waits behind another key.
type (
	// NoteMsg puts a note on the status line.
	NoteMsg struct{ Status }
	// CmdMsg runs a tea.Cmd: its message comes back to the pane through Update.
	CmdMsg struct{ Cmd tea.Cmd }
	// DoMsg asks the shell's runner to do an engine command, built by the pane from what it
	// holds (the dead letters' redrive of the one it marks): the lab runs it behind the
	// commands already waiting, records it and reads the frame after it; the watch, which has no
	// engine, drops it.
	DoMsg struct{ Cmd engine.Command }
	// StepOffMsg says that a step key the pane has off was pressed: the shell says why (the
	// workers run on their own, or e runs to the end, or no scenario is open).
	StepOffMsg struct{}
	// NeedsSessionMsg says that a key the pane has off needs an open scenario: the shell says
	// so when none is open.
	NeedsSessionMsg struct{}
)

// OffKeys is a pane whose keys the ? screen names while they are off, with the words of
// WhyOff (when they act), and whose off keys say why they do nothing.
type OffKeys interface {
	WhyOff(b key.Binding) string
}

// Status is the line under the panes: what the last command did, or why it did nothing.
type Status struct {
	Text  string
	Level Level
}

// Level is how a status note is shown.
type Level int

// Status levels.
const (
	LevelInfo Level = iota
	LevelWarn
	LevelError
)

// Plain is the status note with its mark, unstyled: "! why nothing happened". The lab's status
// line and the watch's write it alike.
func (s Status) Plain() string {
	switch s.Level {
	case LevelWarn:
		return "! " + s.Text
	case LevelError:
		return "✗ " + s.Text
	}
	return "› " + s.Text
}

// KeyName is the name a hint gives a binding's key: the first of its help keys ("space" of
// "space/n", "q" of "q/ctrl+c").
func KeyName(b key.Binding) string {
	name, _, _ := strings.Cut(b.Help().Key, "/")
	return name
}

// KeyNames joins the names of several bindings' keys: "< >".
func KeyNames(bs ...key.Binding) string {
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = KeyName(b)
	}
	return strings.Join(names, " ")
}

// HasKey reports whether k is one of the keys of bs, on or off.
func HasKey(k tea.KeyMsg, bs ...key.Binding) bool {
	for _, b := range bs {
		for _, name := range b.Keys() {
			if name == k.String() {
				return true
			}
		}
	}
	return false
}
