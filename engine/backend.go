package engine

import (
	"context"
	"fmt"
	"time"
)

// Backend is a database the command line runs scenarios on: a DB, and what the commands need of
// it beyond the engine. The SQLite file (leaselab/store) and the PostgreSQL schema
// (leaselab/store/postgres) both are one.
type Backend interface {
	DB
	// Schema is the schema's text, for the report.
	Schema(ctx context.Context) (string, error)
	// SeedBulk writes n payments with their outbox messages, many a transaction.
	SeedBulk(ctx context.Context, n int, start time.Time) error
	// HoldFinalize is the crash tests' fault injection (leaselab worker --hold-finalize).
	HoldFinalize(d time.Duration, notify func(key string))
	// Close closes the database (and drops a temporary PostgreSQL schema).
	Close() error
}

// EnvError is an error of the environment (the file, its folder, its locks; the server, its
// schema and its rows), not of the caller's input. It names the database. The stores return it,
// and the command line exits 3 on it.
type EnvError struct {
	Path string
	Err  error
}

func (e *EnvError) Error() string { return fmt.Sprintf("database %s: %v", e.Path, e.Err) }
func (e *EnvError) Unwrap() error { return e.Err }

// PartialSeedError is a SeedBulk that stopped part way (an interrupt, a full disk): the first
// Written payments of Of, whole transactions, are in the database; the rest are not.
type PartialSeedError struct {
	Written, Of int
	Err         error
}

func (e *PartialSeedError) Error() string {
	return fmt.Sprintf("the seed stopped after %d of %d payments: %v", e.Written, e.Of, e.Err)
}
func (e *PartialSeedError) Unwrap() error { return e.Err }
