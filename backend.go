package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/store"
	"leaselab/store/postgres"
)

// backend is what the commands need of a database beyond engine.DB. The SQLite file
// (*store.DB) and the PostgreSQL schema (*postgres.DB) both are one; --db picks which: a
// postgres:// or postgresql:// URL is a server, anything else a file.
type backend interface {
	engine.DB
	// Schema is the schema's text, for the report.
	Schema(ctx context.Context) (string, error)
	// SeedBulk writes n payments with their outbox messages, many a transaction.
	SeedBulk(ctx context.Context, n int, start time.Time) error
	// HoldFinalize is the crash tests' fault injection (leaselab worker --hold-finalize).
	HoldFinalize(d time.Duration, notify func(key string))
	// Close closes the database (and drops a temporary PostgreSQL schema).
	Close() error
}

var (
	_ backend = (*store.DB)(nil)
	_ backend = (*postgres.DB)(nil)
)

// openPostgres is dbOpener.open for a PostgreSQL URL (run, the lab, stress). A URL that names a
// schema keeps it: one that holds rows is emptied only with --reset, or when it is the schema
// this process made or emptied before (stress --runs, --compare, the lab's R); one that names
// none gets a schema of the run's own, dropped at exit.
func (o *dbOpener) openPostgres(ctx context.Context) (db backend, note string, cleanup func(), err error) {
	if o.opts.FairWriteLock {
		return nil, "", nil, usageError{errors.New("--fair-lock orders SQLite's write lock; PostgreSQL locks rows, not the database: leave it off with a postgres:// --db")}
	}
	now := time.Now()
	var pg *postgres.DB
	if hasSchema(o.path) {
		pg, err = postgres.Create(ctx, o.path, postgres.Options{Reset: o.reset || o.pgOurs})
		note = "kept"
	} else {
		pg, err = postgres.CreateTemp(ctx, o.path, now, fmt.Sprintf("p%d_%06d", os.Getpid(), now.Nanosecond()/1000))
		note = "a schema of its own, dropped at exit"
	}
	if err != nil {
		return nil, "", nil, pgError(err)
	}
	o.pgOurs = true
	noteSchemas(o.notes, pg.Swept(), nil)
	// Called after db.Close, which records a schema it could not drop.
	return pg, note, func() { noteSchemas(o.notes, nil, pg.Leftover()) }, nil
}

// noteSchemas tells the user on w (when not nil), one line each, of the leftover run schemas
// that were dropped and of the run's own schema left on the server (a
// *postgres.LeftoverError): without a word, such schemas would pile up unseen.
func noteSchemas(w io.Writer, swept []string, left error) {
	if w == nil {
		return
	}
	for _, s := range swept {
		fmt.Fprintf(w, "leaselab: dropped the schema %s, left on the server by a run that could not drop it\n", s)
	}
	if left != nil {
		fmt.Fprintf(w, "leaselab: %v\n", left)
	}
}

// createShared makes (or, with reset, empties) the database worker processes share (seed).
func createShared(ctx context.Context, where string, reset bool) (backend, error) {
	if !postgres.IsURL(where) {
		return fileOrNil(store.CreateWith(ctx, where, store.Options{Reset: reset}))
	}
	db, err := postgres.Create(ctx, where, postgres.Options{Reset: reset})
	if err != nil {
		return nil, pgError(err)
	}
	return db, nil
}

// openShared opens the database worker processes share, without changing its rows (worker,
// watch).
func openShared(ctx context.Context, where string) (backend, error) {
	if !postgres.IsURL(where) {
		return fileOrNil(store.Open(ctx, where))
	}
	db, err := postgres.Open(ctx, where)
	if err != nil {
		return nil, pgError(err)
	}
	return db, nil
}

// fileOrNil returns a SQLite database as a backend, and a nil backend (not a nil *store.DB in
// a non-nil interface) with an error.
func fileOrNil(db *store.DB, err error) (backend, error) {
	if err != nil {
		return nil, err
	}
	return db, nil
}

// openWatched opens the database a watch reads: a file read-only, or a PostgreSQL schema (the
// watch only reads it).
func openWatched(ctx context.Context, where string) (backend, error) {
	if !postgres.IsURL(where) {
		return fileOrNil(store.OpenReadOnly(ctx, where))
	}
	return openShared(ctx, where)
}

// hasSchema reports whether a PostgreSQL URL names its schema (?schema=NAME).
func hasSchema(raw string) bool {
	_, err := postgres.SchemaOf(raw)
	return err == nil
}

// pgError sorts the PostgreSQL store's errors by exit code: the server, its schema and its rows
// are the environment (3); a URL that cannot be read is usage (2).
func pgError(err error) error {
	var env *store.EnvError
	if errors.As(err, &env) {
		return err
	}
	return usageError{err}
}

// backendFits refuses a scenario that needs PostgreSQL (engine.Scenario.Backend) on a SQLite
// file, before anything is opened.
func backendFits(sc *engine.Scenario, db string) error {
	if sc.Backend == engine.BackendPostgres && !postgres.IsURL(db) {
		return usageError{fmt.Errorf("scenario %s needs PostgreSQL: it teaches row locks, and SQLite has none (one write lock for the whole file); pass --db postgres://USER@HOST:PORT/DB", sc.Name)}
	}
	return nil
}

// lessonsFor is the built-in scenarios a database can run, in teaching order: every one on
// PostgreSQL; on a SQLite file, all but those that need PostgreSQL. It is the lab's tab order.
func lessonsFor(db string) []string {
	var out []string
	for _, n := range assets.Names() {
		data, src, _ := assets.Scenario(n)
		if sc, err := engine.Parse(src, data); err == nil && backendFits(sc, db) != nil {
			continue
		}
		out = append(out, n)
	}
	return out
}
