// Package ui is the lab: a Bubble Tea screen that steps the engine.
package ui

import (
	"context"
	"errors"
	"io"

	"leaselab/engine"
)

// Config is what the lab needs from the command line.
type Config struct {
	// Start is the scenario to open first: a built-in name or a file path.
	Start string
	// Scenarios are the built-in scenario names, in the order tab cycles through them.
	Scenarios []string
	// Open builds a fresh session for a scenario on a fresh (or reset) database, closing the
	// previous one. It is called from a tea.Cmd, never from Update or View.
	Open func(ctx context.Context, nameOrFile string) (*engine.Session, error)
	In   io.Reader
	Out  io.Writer
}

// Run opens the lab and returns when the user quits.
func Run(ctx context.Context, cfg Config) error {
	return errors.New("the lab is not built yet: use leaselab run")
}
