package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
)

// The lab and the watch are shells around panes. A pane is a component in a file set of its
// own (outbox*.go, workers.go, events.go, sqlpane.go, diagram*.go, ask*.go, …): it keeps its
// state, matches its own keys (a help.KeyMap of key.Bindings), is sized by the shell's layout
// and draws itself from the screen's shared read model. The shell keeps the layout, the status
// line, the overlays and the runner that serialises engine commands (queue.go).
//
// The built-in panes have concrete types that the shell's layout places by hand (layout.go).
// A new pane implements pane and is registered in panes.go: the shell then routes its keys to
// it, puts its keys on the ? screen and gives it lines of its own (see docs/architecture.md).

// scene is what every pane draws from: the last frame read, what changed in it, the styles.
type scene struct {
	f  *frame
	ch changes
	st *Styles
}

// pane is a component a shell can hold without knowing its type: the panes registered in
// panes.go.
type pane interface {
	help.KeyMap // its keys: the ? screen lists them in a group of its own
	// Update takes a message: a key that matches one of its enabled bindings, a frameMsg when
	// a new frame is read, and any message the pane's own commands return.
	Update(msg tea.Msg) (pane, tea.Cmd)
	// SetSize gives the pane its width and height; it returns the resized pane.
	SetSize(w, h int) pane
	// Want is the lines the pane would take at width w: the layout gives it up to that many
	// once the built-in panes have theirs.
	Want(s scene, w int) int
	// View draws the pane in exactly the size it was given.
	View(s scene) string
}

// frameMsg tells the registered panes that the shell read a new frame.
type frameMsg struct{ scene }

// paneLines splits a pane's view into its h lines; none when the pane has no lines.
func paneLines(view string, h int) []string {
	if h <= 0 {
		return nil
	}
	return strings.Split(view, "\n")
}
