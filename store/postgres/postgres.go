// Package postgres is leaselab's PostgreSQL storage: the same tables, the same protocol and the
// same answers as package store's SQLite file, on a server that workers on many hosts can
// share. It implements engine.DB and engine.Conn with github.com/jackc/pgx/v5; every worker
// gets a connection of its own.
//
// A database is a URL, as libpq and pgx take it, plus the schema that holds the run's tables:
//
//	postgres://user:password@host:5432/dbname?sslmode=disable&schema=leaselab_demo
//
// The schema parameter is leaselab's own (it is taken out before the URL reaches the server).
// Without it, Create and Open use DefaultSchema, and CreateTemp makes a schema of its own that
// Close drops (or, when Close cannot, the next run on the server: leftover.go). A schema that
// leaselab did not make is never changed (ErrNotOurs); one that holds rows is emptied only with
// Options.Reset (ErrHoldsRows).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultSchema is the schema of a URL that names none, for Create and Open.
const DefaultSchema = "leaselab"

// schemaMark is the comment on a schema leaselab made, with the version of schema.sql.
const schemaMark = "leaselab schema 1"

// LockTimeout bounds every wait for a row lock, as busy_timeout bounds SQLite's write lock: a
// statement that waits longer fails with engine.ErrBusy, and the action can be retried.
const LockTimeout = 10 * time.Second

// ConnectTimeout bounds each connection attempt of a URL without connect_timeout: the TCP
// connection, TLS and the start-up exchange with the server.
const ConnectTimeout = 10 * time.Second

// callTimeout bounds every call that arrives without a deadline of its own.
const callTimeout = 60 * time.Second

// ErrNotOurs means the schema exists and holds tables leaselab did not make; nothing was changed.
var ErrNotOurs = errors.New("not a leaselab schema")

// ErrHoldsRows means the schema is leaselab's and holds rows: Create empties it only with
// Options.Reset (leaselab's --reset).
var ErrHoldsRows = errors.New("the schema holds rows (use --reset to empty it)")

// schemaRE is what a schema name may be: lower case, so that it never needs quoting.
var schemaRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// IsURL reports whether s names a PostgreSQL server rather than a file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// SchemaOf returns the schema a URL names (?schema=NAME), or an error when it names none.
func SchemaOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%s: not a URL", Redact(raw))
	}
	s := u.Query().Get("schema")
	if s == "" {
		return "", fmt.Errorf("%s names no schema", Redact(raw))
	}
	return s, nil
}

// target is a parsed database URL: pgx's config and the schema.
type target struct {
	config *pgxpool.Config
	schema string
	shown  string // the URL without its password, with the schema, for screens and errors
}

// parse reads raw, takes out the schema parameter (def when there is none) and checks it.
func parse(raw, def string) (target, error) {
	u, err := url.Parse(raw)
	if err != nil || !IsURL(raw) {
		return target{}, fmt.Errorf("--db %q: want a URL like postgres://user@host:5432/db?schema=NAME", Redact(raw))
	}
	rest, schemas, err := takeSchema(u.RawQuery)
	if err != nil {
		return target{}, fmt.Errorf("--db %s: %v", Redact(raw), err)
	}
	schema := def
	switch {
	case len(schemas) > 1:
		return target{}, fmt.Errorf("--db %s: schema= given %d times (%s): give it once", Redact(raw), len(schemas), strings.Join(schemas, ", "))
	case len(schemas) == 1 && schemas[0] != "":
		schema = schemas[0]
	}
	if !schemaRE.MatchString(schema) {
		return target{}, fmt.Errorf("--db %s: schema %q: want lower-case letters, digits and _, up to 63, not starting with a digit",
			Redact(raw), schema)
	}
	// The other parameters go to pgx as they were written: re-encoding them would turn a
	// %20 into a + that pgx passes on as it is (options=-c%20… would reach the server as
	// "-c+…").
	u.RawQuery = rest
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		return target{}, fmt.Errorf("--db %s: %v", Redact(raw), err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// A server that accepts the TCP connection and never answers would otherwise hold the
		// command for callTimeout, then say only "context deadline exceeded".
		cfg.ConnConfig.ConnectTimeout = ConnectTimeout
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.ConnConfig.RuntimeParams["lock_timeout"] = fmt.Sprint(LockTimeout.Milliseconds())
	cfg.ConnConfig.RuntimeParams["application_name"] = "leaselab"
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	if rest != "" {
		rest += "&"
	}
	u.RawQuery = rest + "schema=" + schema
	return target{config: cfg, schema: schema, shown: Redact(u.String())}, nil
}

// takeSchema splits a URL's raw query into its schema parameters (unescaped, in order) and the
// other parameters, left exactly as they were written.
func takeSchema(rawQuery string) (rest string, schemas []string, err error) {
	var kept []string
	for _, pair := range strings.Split(rawQuery, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return "", nil, fmt.Errorf("parameter %q: %v", k, err)
		}
		if key != "schema" {
			kept = append(kept, pair)
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return "", nil, fmt.Errorf("schema %q: %v", v, err)
		}
		schemas = append(schemas, val)
	}
	return strings.Join(kept, "&"), schemas, nil
}

// Redact returns the URL without its password (in the user part or a password parameter).
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://…" // not a URL: show nothing of it that might be a secret
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Options tune Create.
type Options struct {
	// Reset empties a leaselab schema that holds rows; without it Create refuses one. It also
	// drops the schemas runs on the server left behind (sweepLeftovers), as CreateTemp does.
	Reset bool
	temp  bool // CreateTemp's: the schema is marked runMark
}

// DB is one leaselab schema on a PostgreSQL server. It implements engine.DB. Its own pool
// serves snapshots and counts; every worker gets a separate connection from Connect.
type DB struct {
	t     target
	admin *pgxpool.Pool
	hold  *shared.FinalizeHold // fault injection for crash tests; nil when off
	drop  bool                 // the schema is this DB's own (CreateTemp): Close drops it
	// owner holds the run lock of a CreateTemp schema until Close has dropped it (leftover.go).
	owner *pgx.Conn
	swept []string // leftover run schemas dropped when this DB was made
	left  error    // Close's *LeftoverError, when the run's schema could not be dropped
}

var _ engine.DB = (*DB)(nil)

// Create opens the schema of rawURL for a new run: it makes the schema and its tables when they
// do not exist, and leaves a leaselab schema with no rows as it is. A leaselab schema that holds
// rows is emptied with opts.Reset and refused without (ErrHoldsRows); a schema holding anything
// else is refused (ErrNotOurs). Every check runs before the first write, in one transaction.
func Create(ctx context.Context, rawURL string, opts Options) (*DB, error) {
	t, err := parse(rawURL, DefaultSchema)
	if err != nil {
		return nil, err
	}
	return create(ctx, t, opts)
}

// CreateTemp makes a new schema of its own on the server of rawURL (which must name no schema)
// for one run, and Close drops it: the PostgreSQL form of a temporary folder.
func CreateTemp(ctx context.Context, rawURL string, now time.Time, suffix string) (*DB, error) {
	name := fmt.Sprintf("leaselab_run_%s_%s", now.UTC().Format("20060102_150405"), suffix)
	t, err := parse(rawURL, name)
	if err != nil {
		return nil, err
	}
	if t.schema != name {
		return nil, fmt.Errorf("--db %s: a temporary run names no schema", t.shown)
	}
	return create(ctx, t, Options{temp: true})
}

func create(ctx context.Context, t target, opts Options) (*DB, error) {
	temp := opts.temp
	db, err := connect(ctx, t)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	if temp {
		// Before the schema exists: a sweeper never sees it without its lock.
		if db.owner, err = lockRun(ctx, db.admin, t.schema); err != nil {
			db.admin.Close()
			return nil, envError(t, err)
		}
	}
	if temp || opts.Reset {
		db.swept, err = sweepLeftovers(ctx, db.admin, t.schema)
		if err != nil {
			db.closeOwner()
			db.admin.Close()
			return nil, envError(t, err)
		}
	}
	err = pgx.BeginFunc(ctx, db.admin, func(tx pgx.Tx) error { return prepareSchema(ctx, tx, t.schema, opts) })
	if err != nil {
		db.closeOwner()
		db.admin.Close()
		return nil, envError(t, err)
	}
	db.drop = temp
	return db, nil
}

// Swept names the schemas, left behind by runs that could not drop them, that making this DB
// dropped (CreateTemp, or Create with Reset).
func (db *DB) Swept() []string { return db.swept }

// Leftover is Close's *LeftoverError when it could not drop the run's own schema, nil otherwise.
func (db *DB) Leftover() error { return db.left }

// closeOwner ends the connection that holds the run lock, which releases it.
func (db *DB) closeOwner() {
	if db.owner != nil {
		ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
		defer cancel()
		db.owner.Close(ctx)
		db.owner = nil
	}
}

// Open opens an existing leaselab schema without changing its rows (for worker processes and
// watchers that share one).
func Open(ctx context.Context, rawURL string) (*DB, error) {
	t, err := parse(rawURL, DefaultSchema)
	if err != nil {
		return nil, err
	}
	db, err := connect(ctx, t)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	err = pgx.BeginFunc(ctx, db.admin, func(tx pgx.Tx) error {
		mark, exists, err := schemaState(ctx, tx, t.schema)
		if err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("no schema %s: make it with leaselab seed --db URL", t.schema)
		}
		facts, err := schemaFacts(ctx, tx, t.schema)
		if err != nil {
			return err
		}
		if len(facts) == 0 {
			return fmt.Errorf("schema %s: %w: it is empty; make it with leaselab seed --db URL", t.schema, ErrNotOurs)
		}
		return checkOurs(ctx, tx, t.schema, mark, facts)
	})
	if err != nil {
		db.admin.Close()
		return nil, envError(t, err)
	}
	return db, nil
}

// connect opens the admin pool and checks that the server answers.
func connect(ctx context.Context, t target) (*DB, error) {
	cfg := t.config.Copy()
	cfg.MaxConns = 4
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("no answer from the server within %s (connect_timeout): is it a PostgreSQL server, and is it up? %w",
				cfg.ConnConfig.ConnectTimeout, err)
		}
		return nil, envError(t, err)
	}
	return &DB{t: t, admin: pool}, nil
}

// Path names the database for screens and reports: the URL without its password, with the
// schema.
func (db *DB) Path() string { return db.t.shown }

// SchemaName is the schema that holds the run's tables.
func (db *DB) SchemaName() string { return db.t.schema }

// Close closes the shared pool, after dropping the schema when it is CreateTemp's. Worker
// connections are closed by their owners.
func (db *DB) Close() error {
	var err error
	if db.drop {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		if _, err = db.admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+db.t.schema+" CASCADE"); err != nil {
			db.left = &LeftoverError{Schema: db.t.schema, Err: err}
			err = envError(db.t, db.left)
		}
		db.drop = false
	}
	db.closeOwner() // after the drop: until then no sweeper may take the schema
	db.admin.Close()
	return err
}

// HoldFinalize makes every finalize transaction of connections opened afterwards wait d inside
// the transaction, after the payment update, calling notify first. It is for crash tests
// (leaselab worker --hold-finalize), never for normal runs.
func (db *DB) HoldFinalize(d time.Duration, notify func(key string)) {
	db.hold = shared.NewFinalizeHold(d, notify)
}

// envError wraps err as an error of the environment that names the database (without password).
func envError(t target, err error) error {
	return &engine.EnvError{Path: t.shown, Err: describe(err)}
}

func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return shared.WithTimeout(ctx, callTimeout)
}

// describe maps PostgreSQL's errors to those the engine and the CLI understand: a deadlock, a
// serialization failure or a lock wait beyond LockTimeout wraps engine.ErrBusy (nothing was
// changed; the action can be retried).
func describe(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.Code {
	case "40001", "40P01", "55P03": // serialization_failure, deadlock_detected, lock_not_available
		return fmt.Errorf("%w (%v)", engine.ErrBusy, err)
	}
	return err
}
