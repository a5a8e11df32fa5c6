package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
)

// Backends is the registry of the databases the commands run on (engine.Backend), which main
// fills. The command line never speaks SQL: main registers the SQLite files of leaselab/store
// (store.Files) as File, and the PostgreSQL schemas of leaselab/store/postgres
// (postgres.Servers) under the URL schemes postgres and postgresql. --db picks which: a URL
// whose scheme is registered is that server, anything else a file.
type Backends struct {
	File    Files
	Servers map[string]Servers // by URL scheme
}

// server is the registered server backend whose scheme --db's URL has, or nil: a file.
func (b Backends) server(db string) Servers {
	scheme, _, ok := strings.Cut(db, "://")
	if !ok {
		return nil
	}
	return b.Servers[scheme]
}

// isServer reports whether --db names a registered server rather than a file.
func (b Backends) isServer(db string) bool { return b.server(db) != nil }

// Files makes and opens leaselab database files (store.Files).
type Files interface {
	// Check runs every check Create would run on path, and writes nothing.
	Check(ctx context.Context, path string, reset bool) error
	// CheckOpen runs every check Open would run on path, and opens nothing.
	CheckOpen(ctx context.Context, path string) error
	// Create makes path a leaselab database: one that holds rows is emptied only with reset
	// (a leaselab database only; other files are never changed). fair makes the workers of
	// this process take turns for SQLite's write lock (stress --fair-lock).
	Create(ctx context.Context, path string, reset, fair bool) (engine.Backend, error)
	// Open opens the leaselab database path without changing its rows; readOnly, without
	// writing to the file at all (watch).
	Open(ctx context.Context, path string, readOnly bool) (engine.Backend, error)
	// Capabilities is what a file's database can do, before one is opened.
	Capabilities() engine.Capabilities
}

// Servers makes and opens leaselab schemas on PostgreSQL servers (postgres.Servers).
type Servers interface {
	// HasSchema reports whether a server's URL names its schema (?schema=NAME).
	HasSchema(url string) bool
	// Create makes the URL's schema a leaselab schema: one that holds rows is emptied only
	// with reset.
	Create(ctx context.Context, url string, reset bool) (engine.Backend, error)
	// CreateTemp makes a schema of its own on the URL's server, named after now and suffix,
	// and dropped when it is closed.
	CreateTemp(ctx context.Context, url string, now time.Time, suffix string) (engine.Backend, error)
	// Open opens the URL's leaselab schema without changing its rows.
	Open(ctx context.Context, url string) (engine.Backend, error)
	// Capabilities is what a schema can do, before one is opened.
	Capabilities() engine.Capabilities
}

// openPostgres is dbOpener.open for a PostgreSQL URL (run, the lab, stress). A URL that names a
// schema keeps it: one that holds rows is emptied only with --reset, or when it is the schema
// this process made or emptied before (stress --runs, --compare, the lab's R); one that names
// none gets a schema of the run's own, dropped at exit.
func (o *dbOpener) openPostgres(ctx context.Context) (db engine.Backend, note string, cleanup func(), err error) {
	if o.fair {
		return nil, "", nil, usageError{errors.New("--fair-lock orders SQLite's write lock; PostgreSQL locks rows, not the database: leave it off with a postgres:// --db")}
	}
	now := time.Now()
	var pg engine.Backend
	if o.b.server(o.path).HasSchema(o.path) {
		pg, err = o.b.server(o.path).Create(ctx, o.path, o.reset || o.pgOurs)
		note = "kept"
	} else {
		pg, err = o.b.server(o.path).CreateTemp(ctx, o.path, now, fmt.Sprintf("p%d_%06d", os.Getpid(), now.Nanosecond()/1000))
		note = "a schema of its own, dropped at exit"
	}
	if err != nil {
		return nil, "", nil, pgError(err)
	}
	o.pgOurs = true
	sch, _ := pg.(runSchemas)
	if sch != nil {
		noteSchemas(o.notes, sch.Swept(), nil)
	}
	// Called after db.Close, which records a schema it could not drop.
	return pg, note, func() {
		if sch != nil {
			noteSchemas(o.notes, nil, sch.Leftover())
		}
	}, nil
}

// runSchemas is what a PostgreSQL backend (postgres.DB) tells of the schemas of runs: the
// leftovers of earlier runs it dropped, and, after Close, the run's own schema when it could
// not drop it (a *postgres.LeftoverError).
type runSchemas interface {
	Swept() []string
	Leftover() error
}

// noteSchemas tells the user on w (when not nil), one line each, of the leftover run schemas
// that were dropped and of the run's own schema left on the server: without a word, such
// schemas would pile up unseen.
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
func createShared(ctx context.Context, b Backends, where string, reset bool) (engine.Backend, error) {
	if !b.isServer(where) {
		return b.File.Create(ctx, where, reset, false)
	}
	return serverDB(b.server(where).Create(ctx, where, reset))
}

// openShared opens the database worker processes share, without changing its rows (worker,
// watch).
func openShared(ctx context.Context, b Backends, where string) (engine.Backend, error) {
	if !b.isServer(where) {
		return b.File.Open(ctx, where, false)
	}
	return serverDB(b.server(where).Open(ctx, where))
}

// openWatched opens the database a watch reads: a file read-only, or a PostgreSQL schema (the
// watch only reads it).
func openWatched(ctx context.Context, b Backends, where string) (engine.Backend, error) {
	if !b.isServer(where) {
		return b.File.Open(ctx, where, true)
	}
	return openShared(ctx, b, where)
}

// pgError sorts the PostgreSQL store's errors by exit code: the server, its schema and its rows
// are the environment (3); a URL that cannot be read is usage (2).
func pgError(err error) error {
	var env *engine.EnvError
	if errors.As(err, &env) {
		return err
	}
	return usageError{err}
}

// serverDB returns a PostgreSQL schema the store opened, or its error sorted by pgError.
func serverDB(db engine.Backend, err error) (engine.Backend, error) {
	if err != nil {
		return nil, pgError(err)
	}
	return db, nil
}

// Capabilities is what the backend --db picks can do, before it is opened.
func (b Backends) Capabilities(db string) engine.Capabilities {
	if s := b.server(db); s != nil {
		return s.Capabilities()
	}
	return b.File.Capabilities()
}

// backendFits refuses a scenario that requires what the --db's backend cannot do
// (engine.Scenario.Requires), before anything is opened.
func backendFits(b Backends, sc *engine.Scenario, db string) error {
	missing := b.Capabilities(db).Missing(sc.Requires)
	switch {
	case len(missing) == 0:
		return nil
	case slices.Contains(missing, engine.CapRowLocks):
		return usageError{fmt.Errorf("scenario %s needs PostgreSQL: it teaches row locks, and SQLite has none (one write lock for the whole file); pass --db postgres://USER@HOST:PORT/DB", sc.Name)}
	}
	return usageError{fmt.Errorf("scenario %s requires %s, which this database cannot do", sc.Name, strings.Join(missing, ", "))}
}

// lessonsFor is the built-in scenarios a database can run, in teaching order: every one on
// PostgreSQL; on a SQLite file, all but those that need PostgreSQL. It is the lab's tab order.
func lessonsFor(b Backends, db string) []string {
	var out []string
	for _, n := range assets.Names() {
		data, src, _ := assets.Scenario(n)
		if sc, err := scenario.Parse(src, data); err == nil && backendFits(b, sc, db) != nil {
			continue
		}
		out = append(out, n)
	}
	return out
}
