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
	"sync"
	"time"

	"leaselab/engine"
	"leaselab/internal/filekind"
	"leaselab/store/internal/shared"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed schema.sql
var schemaSQL string

// applicationID marks a database file as leaselab's (PRAGMA application_id, "LEAS").
const applicationID = 0x4C454153

// schemaVersion is PRAGMA user_version of the schema in schema.sql. Version 2 made the claim
// index's condition ProcessedAtUtc IS NULL (it was Status IN (...)) and added a CHECK. Version 3
// replaced that index, which a claim walked through every live lease, with two: the Pending rows
// in claim order, and the leases in the order they end. Version 4 added the rest of a message's
// life (package retry): the DeadLettered status, NextAttemptUtc and LastError, and a dead letter
// has a ProcessedAtUtc. Version 5 added the due claim's two indexes (OutboxMessages_Fresh and
// OutboxMessages_Backoff): schema 4's due claim walked past every row still in its backoff.
// Version 6 put the claims' indexes back into one, OutboxMessages_Queue, whose entries a claim
// moves within a page where schema 5's claim wrote one page in each of three indexes, and
// OutboxMessages_Retried; it checks Status with two IN lists of two words (SQLite tests a longer
// list against a table it builds for every UPDATE that sets Status) and ties LockedUntilUtc to
// Processing with a CHECK.
// Open refuses a file of another version (ErrOtherVersion); Create rebuilds
// one it recognises (knownSchemas).
const schemaVersion = 6

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
// input. It names the path. It is engine.EnvError, which the command line knows without this
// package.
type EnvError = engine.EnvError

// DB is a leaselab database file. It implements engine.DB. Its own pool serves snapshots and
// counts; every worker gets a separate connection from Connect.
type DB struct {
	path  string
	admin *sql.DB
	// scratch is the in-memory connection Deserialize loads an image into (image.go); nil
	// until then.
	scratch *sql.DB
	// stmts are the statements of LoadRows, prepared once on admin (image.go).
	stmtsMu sync.Mutex
	stmts   map[string]*sql.Stmt
	gate    *writeGate           // the write-lock queue of Options.FairWriteLock; nil when off
	hold    *shared.FinalizeHold // fault injection for crash tests; nil when off
	// tidy: a read-only DB opened when the file had no -wal and no -shm; Close has SQLite
	// remove the ones its reads made (tidyWAL).
	tidy bool
}

var _ engine.DB = (*DB)(nil)

// pageCacheKiB is SQLite's page cache per connection, in KiB (measured: 200 connections that
// each read a 500-row table held 340 KiB each by default, 150 KiB with 32 KiB of cache).
const pageCacheKiB = 128

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
		// Every worker has a connection of its own, and a served room has hundreds: SQLite's
		// default page cache (2 MiB each) would hold a copy of the whole file in each of them.
		// The OS caches the file once for all; 128 KiB a connection keeps a claim's and a
		// finalize's index pages.
		fmt.Sprintf("_pragma=cache_size(-%d)", pageCacheKiB),
		"_txlock=immediate",
	}
	return u.String() + "?" + strings.Join(q, "&")
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
func (db *DB) Close() error {
	err := db.admin.Close()
	if db.scratch != nil {
		db.scratch.Close()
	}
	if db.tidy && err == nil {
		tidyWAL(db.path)
	}
	return err
}

// tidyWAL removes the -wal and -shm that a read-only connection made beside a WAL file that had
// none: a reader of a WAL database needs both, and only a connection that may write removes
// them when it closes last. So one such connection is opened and closed here, and SQLite does
// what it does after every writer: when no other connection has the file open, it checkpoints
// the -wal (empty: nothing is written to the file) and removes both; when one has, it leaves
// them to that one. Nothing is done when they already went, or when the file cannot be opened
// for writing (then they stay, as before).
func tidyWAL(path string) {
	if size(path+"-wal") < 0 && size(path+"-shm") < 0 {
		return
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path}
	w, err := sql.Open("sqlite", u.String()+"?mode=rw&_pragma=busy_timeout(0)")
	if err != nil {
		return
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int
	_ = w.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n)
}

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
	rows, err := db.admin.QueryContext(ctx, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND "+notInternal+" ORDER BY type DESC, rowid")
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
	return errors.New("is " + filekind.Of(m) + ", not a database file")
}

func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return shared.WithTimeout(ctx, callTimeout)
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
