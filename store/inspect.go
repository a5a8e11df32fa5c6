package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// Kind says what a database file is to leaselab.
type Kind int

const (
	// KindNew is a file that does not exist yet, an empty file, or an SQLite database with
	// nothing in it: there is nothing to lose, and Create makes the schema.
	KindNew Kind = iota
	// KindCurrent is a leaselab database of this schema version.
	KindCurrent
	// KindOlder is a leaselab database of an older schema version, which Create rebuilds.
	KindOlder
)

// Inspection is what Inspect found in a database file.
type Inspection struct {
	Path     string // the absolute path
	Exists   bool   // false: nothing is at Path yet (its folder exists)
	Kind     Kind
	Version  int      // the schema version of a leaselab database; 0 for KindNew
	Contents Contents // what the database holds (zero for KindNew)
	// BadLease is the key of a Processing row whose LockedUntilUtc, BadUntil, is not a time
	// (written by hand or by another program), or "" when there is none. Such a lease never
	// ends, so no worker could ever take the row.
	BadLease, BadUntil string
	// MaxedFence is the key of a row whose LeaseVersion is at the int64 maximum (or not an
	// integer): its next claim would overflow the fencing token. "" when there is none.
	MaxedFence string
}

// Inspect says what the file at path is and what it holds, and changes nothing: not a byte of
// the file, and no -wal or -shm beside it unless they were already there (it reads the file as
// immutable when no other connection can be using it). now is when a lease must still run to
// count as live. A missing folder, a path that is not a regular file, a hot journal and a file
// that is not leaselab's (ErrNotOurs) are errors, each an *EnvError naming the path.
func Inspect(ctx context.Context, path string, now time.Time) (*Inspection, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &EnvError{Path: path, Err: err}
	}
	ins := &Inspection{Path: abs}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if li, lerr := os.Lstat(abs); lerr == nil && li.Mode()&os.ModeSymlink != 0 {
			// A dangling symbolic link: creating the file would fail with "file exists".
			to, _ := os.Readlink(abs)
			return nil, &EnvError{Path: abs, Err: fmt.Errorf("is a symbolic link to %s, which does not exist: create the file it names, or give its own path", to)}
		}
		return ins, checkFolder(abs)
	case err != nil:
		return nil, &EnvError{Path: abs, Err: err}
	case !fi.Mode().IsRegular():
		return nil, &EnvError{Path: abs, Err: notRegular(fi.Mode())}
	}
	ins.Exists = true
	wal, shm, journal := size(abs+"-wal"), size(abs+"-shm"), size(abs+"-journal")
	if fi.Size() == 0 && wal <= 0 && journal <= 0 {
		return ins, nil
	}
	// With no -wal, -shm or -journal beside it, no connection is writing the file: read it as
	// immutable, which creates nothing. Otherwise SQLite must see those files (and they exist).
	q := "mode=ro&_pragma=busy_timeout(2000)"
	read := abs
	switch {
	case wal < 0 && shm < 0 && journal <= 0:
		q = "mode=ro&immutable=1"
	case wal >= 0 && journal <= 0 && (shm < 0 || fi.Size()+wal <= maxInspectCopy):
		// A -wal: it may hold committed pages that immutable would not see, and reading the
		// file itself would create its -shm when there is none (a -wal left without it: no
		// connection has the file open, since each one holds the -shm) and write into the
		// -shm when there is one. Read a private copy of the file and its -wal instead: SQLite
		// rebuilds the copy's -shm from its -wal. A copy taken while a writer commits may miss
		// that commit; what it decides is checked again under the write lock before any write
		// (prepare). A file too big to copy at every start, with a -shm, is read in place.
		dir, err := os.MkdirTemp("", "leaselab-inspect-*")
		if err != nil {
			return nil, &EnvError{Path: abs, Err: fmt.Errorf("a folder to read a copy of it in: %w", err)}
		}
		defer os.RemoveAll(dir)
		read = filepath.Join(dir, "copy.db")
		for _, suffix := range []string{"", "-wal"} {
			if err := copyPrivate(read+suffix, abs+suffix); err != nil {
				return nil, &EnvError{Path: abs, Err: fmt.Errorf("read a copy of it: %w", err)}
			}
		}
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	err = ins.readFile(ctx, read, q, now)
	if err != nil && read != abs && shm >= 0 && !errors.Is(err, ErrNotOurs) {
		// The copy was taken while a writer checkpointed, and is torn: read the file itself.
		*ins = Inspection{Path: abs, Exists: true}
		err = ins.readFile(ctx, abs, q, now)
	}
	if err != nil {
		if errors.Is(err, errHotJournal) {
			err = hotJournal(abs)
		}
		return nil, &EnvError{Path: abs, Err: err}
	}
	return ins, nil
}

// readFile reads the database at path, opened with the URL parameters q, into ins.
func (ins *Inspection) readFile(ctx context.Context, path, q string, now time.Time) error {
	u := url.URL{Scheme: "file", OmitHost: true, Path: path}
	db, err := sql.Open("sqlite", u.String()+"?"+q)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	return ins.read(ctx, db, now)
}

// read fills in the kind, version and contents of the database db.
func (ins *Inspection) read(ctx context.Context, db querier, now time.Time) error {
	var appID, version int64
	err := scan(ctx, db, func(r *sql.Rows) error { return r.Scan(&appID, &version) },
		"SELECT application_id, user_version FROM pragma_application_id, pragma_user_version")
	if err != nil {
		return err
	}
	facts, err := readSchema(ctx, db)
	if err != nil {
		return err
	}
	if len(facts) == 0 {
		if appID == applicationID || appID == 0 && version == 0 {
			return nil // an SQLite database with nothing in it
		}
		return fmt.Errorf("%w: it is another program's empty database (application_id %d, user_version %d)", ErrNotOurs, appID, version)
	}
	v, diff, err := recognize(ctx, facts)
	switch {
	case err != nil:
		return err
	case v == 0:
		return fmt.Errorf("%w: %s; leaselab changes only databases it made, whatever their application_id: choose another file", ErrNotOurs, diff)
	case appID != applicationID || version != int64(v):
		return fmt.Errorf("%w: it has leaselab's tables of schema %d, but application_id %d and user_version %d, which leaselab does not write; choose another file",
			ErrNotOurs, v, appID, version)
	}
	ins.Version, ins.Kind = v, KindCurrent
	if v != schemaVersion {
		ins.Kind = KindOlder
	}
	if ins.Contents, err = countContents(ctx, db, now); err != nil {
		return err
	}
	err = scan(ctx, db, func(r *sql.Rows) error {
		var key string
		var until sql.NullString
		err := r.Scan(&key, &until)
		ins.BadLease, ins.BadUntil = key, until.String
		return err
	}, `SELECT IdempotencyKey, LockedUntilUtc FROM OutboxMessages
	     WHERE Status = 'Processing' AND (LockedUntilUtc IS NULL OR julianday(LockedUntilUtc) IS NULL) ORDER BY Id LIMIT 1`)
	if err != nil {
		return err
	}
	return scan(ctx, db, func(r *sql.Rows) error { return r.Scan(&ins.MaxedFence) },
		`SELECT IdempotencyKey FROM OutboxMessages
	     WHERE Status <> 'Processed' AND (typeof(LeaseVersion) <> 'integer' OR LeaseVersion >= 9223372036854775807) ORDER BY Id LIMIT 1`)
}

// countContents counts what emptying the database would delete. Every version leaselab
// recognises has these tables and columns.
func countContents(ctx context.Context, q querier, now time.Time) (Contents, error) {
	var c Contents
	err := scan(ctx, q, func(r *sql.Rows) error { return r.Scan(&c.Payments, &c.Messages, &c.LiveLeases) },
		`SELECT (SELECT count(*) FROM Payments), (SELECT count(*) FROM OutboxMessages),
		        (SELECT count(*) FROM OutboxMessages WHERE Status = 'Processing' AND LockedUntilUtc > ?)`, FormatTime(now))
	return c, err
}

// checkFolder says what is wrong when the folder of a file that does not exist cannot hold it.
func checkFolder(abs string) error {
	dir := filepath.Dir(abs)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &EnvError{Path: abs, Err: fmt.Errorf("the folder %s does not exist: create it first (mkdir -p %s) or choose another path", dir, dir)}
	case err != nil:
		return &EnvError{Path: abs, Err: fmt.Errorf("the folder %s: %w", dir, err)}
	case !fi.IsDir():
		return &EnvError{Path: abs, Err: fmt.Errorf("%s is not a folder", dir)}
	}
	return nil
}

// maxInspectCopy is the most Inspect copies to read a WAL file without touching its -shm.
const maxInspectCopy = 64 << 20

// copyPrivate copies the file src to dst, which it creates with mode 0600 (it holds payment data).
func copyPrivate(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// size is the size of the file at path, or -1 when there is none.
func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// hotJournal says what a hot journal is and what to do about it.
func hotJournal(abs string) error {
	return fmt.Errorf("%s-journal is a hot journal: a program stopped in the middle of a write, and SQLite must roll "+
		"that write back before the file can be read; open it once with a program that may write it "+
		"(sqlite3 %s \"pragma integrity_check\"), then try again", filepath.Base(abs), abs)
}
