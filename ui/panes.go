package ui

import (
	"leaselab/ui/deadletters"
	"leaselab/ui/rescuer"
)

// registry is every pane registered with the shells, in the order they stand on the screen:
// below the built-in panes, above the status line. To add a pane, write its file set (a type
// that implements pane, its keys in a *_keys.go) and add one line here.
func registry() []paneSpec {
	return []paneSpec{
		{name: "rescuer", new: rescuer.New, lab: true},
		{name: "redrive", new: deadletters.New, lab: true},
	}
}
