package postgres

import (
	"context"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"
)

// Servers makes and opens leaselab schemas on PostgreSQL servers for the command line
// (ui/cli.Servers), which never imports this package: main wires it. Its methods are this
// package's functions, with engine's types.
type Servers struct{}

var _ engine.Backend = (*DB)(nil)

// IsURL reports whether s names a PostgreSQL server rather than a file (IsURL).
func (Servers) IsURL(s string) bool { return IsURL(s) }

// HasSchema reports whether a server's URL names its schema (?schema=NAME).
func (Servers) HasSchema(rawURL string) bool {
	_, err := SchemaOf(rawURL)
	return err == nil
}

// Create makes the URL's schema a leaselab schema (Create): one that holds rows is emptied only
// with reset.
func (Servers) Create(ctx context.Context, rawURL string, reset bool) (engine.Backend, error) {
	return shared.Backend(Create(ctx, rawURL, Options{Reset: reset}))
}

// CreateTemp makes a schema of its own on the URL's server, named after now and suffix, and
// dropped when it is closed (CreateTemp).
func (Servers) CreateTemp(ctx context.Context, rawURL string, now time.Time, suffix string) (engine.Backend, error) {
	return shared.Backend(CreateTemp(ctx, rawURL, now, suffix))
}

// Open opens the URL's leaselab schema without changing its rows (Open).
func (Servers) Open(ctx context.Context, rawURL string) (engine.Backend, error) {
	return shared.Backend(Open(ctx, rawURL))
}

// Capabilities is what a leaselab schema can do (DB.Capabilities), known before one is opened:
// the command line checks a lesson's requires: line with it. Its ports are an opened DB's to
// use, not these.
func (Servers) Capabilities() engine.Capabilities { return (*DB)(nil).Capabilities() }
