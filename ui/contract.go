package ui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// The contract between a shell and its panes: what a pane draws from, what it implements, and
// what it may ask of its shell.

// scene is what every pane draws from: the last frame read, what changed in it, the styles.
type scene struct {
	f  *frame
	ch changes
	st *Styles
}

// pane is a component a shell holds without knowing its type: the panes registered in
// panes.go. Like a bubbles component it is a value: Update and SetSize return the pane anew.
type pane interface {
	help.KeyMap // its keys: matched by it alone, and listed on the ? screen under its name
	// Update takes a message: a key that matches one of its enabled bindings, or any message
	// the shell does not know (those of the pane's own commands). out is what the pane asks of
	// the shell, at once: nil, a noteMsg, an opMsg or a cmdMsg.
	Update(msg tea.Msg, s scene) (_ pane, out tea.Msg)
	// SetSize gives the pane its width and height (0: not on screen).
	SetSize(w, h int) pane
	// Want is how many lines the pane would take at width w: the layout gives it up to that
	// many once the built-in panes have theirs.
	Want(s scene, w int) int
	// View draws the pane in exactly the size it was given.
	View(s scene) string
}

// pinned is a registered pane that also implements Pinned: while Pinned says so, the narrow
// layout gives it its lines before the optional lines of the built-in panes (the titles, the
// second worker), since its key acts on what only it shows (the dead letters' V).
type pinned interface{ Pinned(s scene) bool }

// What a pane asks of its shell (the out message of Update). The shell takes it in the same
// Update, so that a key's effect never waits behind another key.
type (
	// noteMsg puts a note on the status line.
	noteMsg struct{ status }
	// cmdMsg runs a tea.Cmd: its message comes back to the pane through Update.
	cmdMsg struct{ cmd tea.Cmd }
	// needsSessionMsg says that a key the pane has off needs an open scenario: the shell says
	// so when none is open.
	needsSessionMsg struct{}
)

// offKeys is a pane whose keys the ? screen names while they are off, with the words of
// WhyOff (when they act), and whose off keys say why they do nothing.
type offKeys interface {
	WhyOff(b key.Binding) string
}

// status is the line under the panes: what the last command did, or why it did nothing.
type status struct {
	text  string
	level level
}

// level is how a status note is shown.
type level int

// Status levels.
const (
	levelInfo level = iota
	levelWarn
	levelError
)
