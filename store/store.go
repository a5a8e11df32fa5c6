// Package store is leaselab's SQLite storage, and the only package that speaks SQL: the schema,
// seeding, the naive load, the atomic claim, the ownership-checked and unchecked finalize,
// snapshots for the screen and the counts for the checks. It implements engine.DB and
// engine.Conn on a real database file in WAL mode (modernc.org/sqlite, no cgo).
package store

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"leaselab/engine"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed schema.sql
var schemaSQL string

// applicationID marks a database file as leaselab's (PRAGMA application_id, "LEAS").
const applicationID = 0x4C454153

// schemaVersion is PRAGMA user_version of the schema in schema.sql. Version 2 made the claim
// index's condition ProcessedAtUtc IS NULL (it was Status IN (...)) and added a CHECK. Open
// refuses a file of another version (ErrOtherVersion); Create rebuilds one it recognises
// (knownSchemas).
const schemaVersion = 2

// BusyTimeout is how long a connection waits for SQLite's write lock before SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

// callTimeout bounds every call that arrives without a deadline of its own.
const callTimeout = 60 * time.Second

// ErrNotOurs means the file exists but is not a leaselab database; nothing was changed.
var ErrNotOurs = errors.New("not a leaselab database")

// ErrOtherVersion means the file is a leaselab database with another schema version. Open refuses
// it; Create, which empties the file anyway, builds it again with this version's schema.
var ErrOtherVersion = errors.New("a leaselab database of another version")

// errHotJournal is SQLITE_READONLY_ROLLBACK: a read-only connection found a hot journal, which
// only a connection that may write can roll back.
var errHotJournal = errors.New("a hot journal must be rolled back first")

// EnvError is an error of the environment (the file, its folder, its locks), not of the caller's
// input. It names the path.
type EnvError struct {
	Path string
	Err  error
}

func (e *EnvError) Error() string { return fmt.Sprintf("database %s: %v", e.Path, e.Err) }
func (e *EnvError) Unwrap() error { return e.Err }

// DB is a leaselab database file. It implements engine.DB. Its own pool serves snapshots and
// counts; every worker gets a separate connection from Connect.
type DB struct {
	path  string
	admin *sql.DB
	gate  *writeGate    // the write-lock queue of Options.FairWriteLock; nil when off
	hold  *finalizeHold // fault injection for crash tests; nil when off
}

var _ engine.DB = (*DB)(nil)

// dsn builds the connection string: pragmas in the DSN so that every connection gets them,
// BEGIN IMMEDIATE for every transaction, and mode=rw when the file must already exist.
func dsn(path string, mustExist bool) string {
	mode := "rwc"
	if mustExist {
		mode = "rw"
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path}
	q := []string{
		"mode=" + mode,
		fmt.Sprintf("_pragma=busy_timeout(%d)", BusyTimeout.Milliseconds()),
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(NORMAL)",
		"_pragma=foreign_keys(1)",
		"_txlock=immediate",
	}
	return u.String() + "?" + strings.Join(q, "&")
}

// readOnlyDSN is the connection string of a reader that never writes: mode=ro, and no
// journal_mode pragma (setting one writes the file's header).
func readOnlyDSN(path string) string {
	u := url.URL{Scheme: "file", OmitHost: true, Path: path}
	return u.String() + fmt.Sprintf("?mode=ro&_pragma=busy_timeout(%d)&_pragma=query_only(1)", BusyTimeout.Milliseconds())
}

// Create opens the database at path for a new run, as CreateWith(ctx, path,
// Options{Reset: true}) does: it empties a leaselab database that holds rows. It is for callers
// that own the file (tests, temporary folders); the commands pass the user's --reset to
// CreateWith, which refuses such a database without it. Either refuses a file that is not
// leaselab's, and changes nothing before every check has passed.
func Create(ctx context.Context, path string) (*DB, error) {
	return create(ctx, path, true)
}

// create makes the file and the schema when the file is new or empty, empties a leaselab
// database when reset allows it (MayReset), and rebuilds an older leaselab schema (recognised
// column by column) with this version's. Everything is checked before the first write: a file
// that is anything else is refused with ErrNotOurs and left byte for byte as it was.
func create(ctx context.Context, path string, reset bool) (*DB, error) {
	ins, err := CheckCreate(ctx, path, reset)
	if err != nil {
		return nil, err
	}
	abs := ins.Path
	made := false
	if !ins.Exists {
		// Our own file, with our own mode: it will hold payment data.
		f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, &EnvError{Path: abs, Err: fmt.Errorf("cannot create it: %w", err)}
		}
		f.Close()
		made = true
	}
	db, err := open(ctx, abs, true)
	if err == nil {
		err = db.prepare(ctx, ins, reset)
		if err != nil {
			db.Close()
			err = &EnvError{Path: abs, Err: err}
		}
	}
	if err != nil {
		if made { // nothing half-made is left behind
			for _, p := range []string{abs, abs + "-wal", abs + "-shm", abs + "-journal"} {
				os.Remove(p)
			}
		}
		return nil, err
	}
	return db, nil
}

// CheckCreate runs every check of Create (with reset, of CreateWith with Options{Reset: reset}),
// and writes nothing: it returns what Create would find, or the error Create would return.
func CheckCreate(ctx context.Context, path string, reset bool) (*Inspection, error) {
	ins, err := Inspect(ctx, path, time.Now())
	if err != nil {
		return nil, err
	}
	if ins.Kind != KindNew {
		older := 0
		if ins.Kind == KindOlder {
			older = ins.Version
		}
		if err := MayReset(ins.Contents, older, reset); err != nil {
			return nil, &EnvError{Path: ins.Path, Err: err}
		}
	}
	return ins, nil
}

// prepare makes the schema of a new file, empties a current one or rebuilds an older one, in one
// transaction that first checks again, under the write lock, what Inspect saw: another program
// may have written the file in between.
func (db *DB) prepare(ctx context.Context, ins *Inspection, reset bool) error {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	return db.inTx(ctx, func(tx *sql.Tx) error {
		facts, err := readSchema(ctx, tx)
		if err != nil {
			return err
		}
		if ins.Kind == KindNew {
			if len(facts) != 0 {
				return errChanged
			}
			return db.createSchemaTx(ctx, tx)
		}
		if v, _, err := recognize(ctx, facts); err != nil || v != ins.Version {
			return errors.Join(errChanged, err)
		}
		held, err := countContents(ctx, tx, time.Now())
		if err != nil {
			return err
		}
		if err := MayReset(held, 0, reset); err != nil {
			return err
		}
		if ins.Kind == KindOlder {
			if _, err := tx.ExecContext(ctx, "DROP TABLE OutboxMessages; DROP TABLE Payments"); err != nil {
				return fmt.Errorf("drop the old schema: %w", describe(err))
			}
			return db.createSchemaTx(ctx, tx)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM OutboxMessages; DELETE FROM Payments"); err != nil {
			return fmt.Errorf("reset: %w", describe(err))
		}
		return nil
	})
}

// errChanged means the file changed between Inspect and the write transaction.
var errChanged = errors.New("another program changed the file while leaselab opened it; nothing was written: try again")

// Open opens an existing leaselab database of this schema version without changing its rows (for
// worker processes that share one file). Like Create, it refuses a file that is not leaselab's
// before anything is written.
func Open(ctx context.Context, path string) (*DB, error) {
	abs, err := CheckOpen(ctx, path)
	if err != nil {
		return nil, err
	}
	return open(ctx, abs, true)
}

// OpenReadOnly opens an existing leaselab database of this schema version for reading only
// (for the watch): mode=ro and query_only, and no journal_mode, so that the file and its journal
// mode stay as they are. Writes through it fail.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	abs, err := CheckOpen(ctx, path)
	if err != nil {
		return nil, err
	}
	admin, err := sql.Open("sqlite", readOnlyDSN(abs))
	if err != nil {
		return nil, &EnvError{Path: abs, Err: err}
	}
	admin.SetMaxOpenConns(2)
	pctx, cancel := withTimeout(ctx)
	defer cancel()
	if err := admin.PingContext(pctx); err != nil {
		admin.Close()
		if errors.Is(describe(err), errHotJournal) {
			return nil, &EnvError{Path: abs, Err: hotJournal(abs)}
		}
		return nil, &EnvError{Path: abs, Err: describe(err)}
	}
	return &DB{path: abs, admin: admin}, nil
}

// CheckOpen runs the checks of Open and OpenReadOnly, and opens nothing: the file must be a
// leaselab database of this version. It returns the file's absolute path.
func CheckOpen(ctx context.Context, path string) (string, error) {
	ins, err := Inspect(ctx, path, time.Now())
	if err != nil {
		return "", err
	}
	abs := ins.Path
	switch {
	case !ins.Exists:
		return "", &EnvError{Path: abs, Err: fmt.Errorf("no such file: make it with leaselab seed --db %s", abs)}
	case ins.Kind == KindNew:
		return "", &EnvError{Path: abs, Err: fmt.Errorf("%w: the file is empty; make it with leaselab seed --db %s", ErrNotOurs, abs)}
	case ins.Kind == KindOlder:
		return "", &EnvError{Path: abs, Err: fmt.Errorf("%w (schema %d, this leaselab uses %d): make it again with leaselab seed --reset --db FILE",
			ErrOtherVersion, ins.Version, schemaVersion)}
	}
	return abs, nil
}

func open(ctx context.Context, abs string, mustExist bool) (*DB, error) {
	admin, err := openPool(abs, mustExist, 4)
	if err != nil {
		return nil, &EnvError{Path: abs, Err: err}
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		return nil, &EnvError{Path: abs, Err: describe(err)}
	}
	return &DB{path: abs, admin: admin}, nil
}

func openPool(abs string, mustExist bool, conns int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(abs, mustExist))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(0)
	return db, nil
}

// createSchemaTx creates schema.sql's tables and marks the file as leaselab's, in tx.
func (db *DB) createSchemaTx(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, schemaSQL); err != nil {
		return fmt.Errorf("create schema: %w", describe(err))
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, schemaVersion)); err != nil {
		return fmt.Errorf("mark schema: %w", describe(err))
	}
	return nil
}

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close closes the shared pool. Worker connections are closed by their owners.
func (db *DB) Close() error { return db.admin.Close() }

// Checkpoint runs PRAGMA wal_checkpoint(TRUNCATE) and reports whether it was blocked (busy=1),
// which happens when some connection still holds a read transaction open.
func (db *DB) Checkpoint(ctx context.Context) (busy bool, err error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	var b, logFrames, done int
	if err := db.admin.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&b, &logFrames, &done); err != nil {
		return false, fmt.Errorf("checkpoint: %w", describe(err))
	}
	return b != 0, nil
}

// IntegrityCheck runs PRAGMA integrity_check and returns its first line ("ok" when sound).
func (db *DB) IntegrityCheck(ctx context.Context) (string, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	var s string
	if err := db.admin.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&s); err != nil {
		return "", fmt.Errorf("integrity check: %w", describe(err))
	}
	return s, nil
}

// Schema returns the CREATE statements of the database, as sqlite_schema holds them.
func (db *DB) Schema(ctx context.Context) (string, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	rows, err := db.admin.QueryContext(ctx, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, rowid")
	if err != nil {
		return "", fmt.Errorf("read schema: %w", describe(err))
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", err
		}
		parts = append(parts, s+";")
	}
	return strings.Join(parts, "\n"), rows.Err()
}

// inTx runs fn in one BEGIN IMMEDIATE transaction on the admin pool.
func (db *DB) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return runTx(ctx, db.admin, fn)
}

// runTx runs fn in one transaction (BEGIN IMMEDIATE, from the DSN) and commits when fn returns
// nil. Every statement of fn must run on the tx it is given.
func runTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin immediate: %w", describe(err))
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", describe(err))
	}
	return nil
}

// notRegular says what a path that is not a regular file is instead.
func notRegular(m os.FileMode) error {
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "is a directory"
	case m&os.ModeDevice != 0:
		kind = "is a device, not a database file"
	case m&os.ModeNamedPipe != 0:
		kind = "is a named pipe, not a database file"
	case m&os.ModeSocket != 0:
		kind = "is a socket, not a database file"
	}
	return errors.New(kind)
}

func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, callTimeout)
}

// describe maps SQLite result codes to errors the engine and the CLI understand: BUSY (the write
// lock could not be had in time) wraps engine.ErrBusy; NOTADB and CORRUPT say so in words.
func describe(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	if se.Code() == sqlite3.SQLITE_READONLY_ROLLBACK {
		return fmt.Errorf("%w (%v)", errHotJournal, err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("%w (%v)", engine.ErrBusy, err)
	case sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w: the file is not an SQLite database", ErrNotOurs)
	case sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("database file is corrupt: %v", err)
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
		return fmt.Errorf("cannot write the database file: %v", err)
	}
	return err
}
