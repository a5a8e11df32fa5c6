package store

import (
	"context"

	"leaselab/engine"
	"leaselab/store/internal/shared"
)

// Files makes and opens leaselab database files for the command line (ui/cli.Files), which
// never imports this package: main wires it. Its methods are this package's functions, with
// engine's types.
type Files struct{}

var _ engine.Backend = (*DB)(nil)

// Check runs every check Create would run on path (CheckCreate), and writes nothing.
func (Files) Check(ctx context.Context, path string, reset bool) error {
	_, err := CheckCreate(ctx, path, reset)
	return err
}

// CheckOpen runs every check Open would run on path (CheckOpen), and opens nothing.
func (Files) CheckOpen(ctx context.Context, path string) error {
	_, err := CheckOpen(ctx, path)
	return err
}

// Create makes path a leaselab database (CreateWith): one that holds rows is emptied only with
// reset; fair is Options.FairWriteLock.
func (Files) Create(ctx context.Context, path string, reset, fair bool) (engine.Backend, error) {
	return shared.Backend(CreateWith(ctx, path, Options{Reset: reset, FairWriteLock: fair}))
}

// Open opens the leaselab database path without changing its rows (Open), or, with readOnly,
// without writing to the file at all (OpenReadOnly).
func (Files) Open(ctx context.Context, path string, readOnly bool) (engine.Backend, error) {
	if readOnly {
		return shared.Backend(OpenReadOnly(ctx, path))
	}
	return shared.Backend(Open(ctx, path))
}

// Capabilities is what a leaselab file's database can do (DB.Capabilities), known before one is
// opened: the command line checks a lesson's requires: line with it. Its ports are an opened
// DB's to use, not these.
func (Files) Capabilities() engine.Capabilities { return (*DB)(nil).Capabilities() }
