package ui

import (
	"leaselab/ui/deadletters"
	"leaselab/ui/rescuer"
)

// registry is every pane registered with the shells, in the order they stand on the screen
// after the slot each names (view.go; none: after the events). To add a pane, write its
// package (a type that implements common.Pane, and New) and add one line here.
func registry() []paneSpec {
	return []paneSpec{
		{name: "rescuer", new: rescuer.New, lab: true},
		{name: "redrive", new: deadletters.New, lab: true},
	}
}
