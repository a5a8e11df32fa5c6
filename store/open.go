package store

// Opening a database file: Create and CreateWith for a new run, Open for a worker process,
// OpenReadOnly for the watch. Each first runs every check (Inspect, MayReset) without writing.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"
)

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
		if made && !errors.Is(err, errChanged) { // nothing half-made is left behind
			for _, p := range []string{abs, abs + "-wal", abs + "-shm", abs + "-journal"} {
				os.Remove(p)
			}
		}
		return nil, err
	}
	return db, nil
}

// CheckCreate runs every check that CreateWith(ctx, path, Options{Reset: reset}) runs, and writes
// nothing: it returns what CreateWith would find, or the error it would return.
func CheckCreate(ctx context.Context, path string, reset bool) (*Inspection, error) {
	ins, err := Inspect(ctx, path, time.Now())
	if err != nil {
		return nil, err
	}
	// Before the rows: a file this user may not write cannot be reset either.
	if err := checkWritable(ins.Path, ins.Exists); err != nil {
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
var errChanged = errors.New("another program changed the file while leaselab opened it; leaselab left its rows alone: try again")

// Open opens an existing leaselab database of this schema version without changing its rows (for
// worker processes that share one file). Like Create, it refuses a file that is not leaselab's
// before anything is written.
func Open(ctx context.Context, path string) (*DB, error) {
	abs, err := CheckOpen(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := checkWritable(abs, true); err != nil {
		return nil, err
	}
	return open(ctx, abs, true)
}

// OpenReadOnly opens an existing leaselab database of this schema version for reading only
// (for the watch): mode=ro and query_only, and no journal_mode, so that the file and its journal
// mode stay as they are. Writes through it fail. A -wal and -shm that its reads had to make
// beside a file that had none are removed at Close, unless another connection still uses them.
// Such a file that this user may not write (so could not remove them) is read as immutable
// when no one may write it, and refused when someone may (frozenFile).
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	abs, err := CheckOpen(ctx, path)
	if err != nil {
		return nil, err
	}
	tidy := size(abs+"-wal") < 0 && size(abs+"-shm") < 0
	dsn := readOnlyDSN(abs)
	if tidy {
		frozen, err := frozenFile(abs)
		if err != nil {
			return nil, err
		}
		if frozen {
			// No one but root may write it, and no one has it open: read it as immutable,
			// which makes no -wal or -shm this user could not remove.
			dsn += "&immutable=1"
			tidy = false
		}
	}
	admin, err := sql.Open("sqlite", dsn)
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
	return &DB{path: abs, admin: admin, tidy: tidy}, nil
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
	case ins.BadLease != "":
		// A worker would wait for that lease for ever, printing "until -".
		return "", &EnvError{Path: abs, Err: fmt.Errorf("row %s is Processing under a lease whose LockedUntilUtc %q is not a time: it never ends, and no worker could take the row; make the file again with leaselab seed --reset --db %s",
			ins.BadLease, ins.BadUntil, abs)}
	case ins.MaxedFence != "":
		// Its next claim would overflow LeaseVersion, the fencing token, mid-transaction.
		return "", &EnvError{Path: abs, Err: fmt.Errorf("row %s has a LeaseVersion at the largest integer (or not an integer): its next claim would overflow the fencing token; make the file again with leaselab seed --reset --db %s",
			ins.MaxedFence, abs)}
	}
	return abs, nil
}
