package store

// Copies of the whole database and the way back to one, for engine/explore, which restores a
// state it has seen before it tries the state's next transitions: in memory (SQLite's
// serialize and deserialize, then the backup API into the file) or through a file (VACUUM
// INTO, then the backup API from it). Every worker connection sees the restored rows, as it
// sees another connection's commit.

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	"modernc.org/sqlite"
)

// serializer is what modernc.org/sqlite's driver connection offers.
type serializer interface {
	Serialize() ([]byte, error)
	Deserialize(buf []byte) error
}

// backuper is the driver connection's backup API.
type backuper interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
}

// Serialize returns a copy of the whole database as SQLite serializes it: the pages of the
// file, the write-ahead log's committed frames included, marked as a rollback-journal database
// (a copy in memory has no write-ahead log).
func (db *DB) Serialize(ctx context.Context) ([]byte, error) {
	var img []byte
	err := db.raw(ctx, db.admin, func(dc any) error {
		s, ok := dc.(serializer)
		if !ok {
			return fmt.Errorf("serialize: the driver cannot (%T)", dc)
		}
		var err error
		img, err = s.Serialize()
		return err
	})
	if err == nil && len(img) >= 100 {
		// Bytes 18 and 19 of the header say WAL (2): a database in memory has no -wal file to
		// open, and would refuse to be read. The copy says rollback journal (1); the backup
		// into the file sets them back to WAL, as it does for every WAL destination.
		img[18], img[19] = 1, 1
	}
	if err != nil {
		return nil, &EnvError{Path: db.path, Err: fmt.Errorf("serialize: %w", describe(err))}
	}
	return img, nil
}

// Deserialize makes the database what img, from Serialize, holds: img is loaded into a
// connection of its own in memory, and SQLite's backup API copies it over the file in one
// write transaction.
func (db *DB) Deserialize(ctx context.Context, img []byte) error {
	if db.scratch == nil {
		s, err := sql.Open("sqlite", "file::memory:")
		if err != nil {
			return &EnvError{Path: db.path, Err: err}
		}
		s.SetMaxOpenConns(1)
		s.SetMaxIdleConns(1)
		s.SetConnMaxLifetime(0)
		db.scratch = s
	}
	err := db.raw(ctx, db.scratch, func(dc any) error {
		s, ok := dc.(serializer)
		if !ok {
			return fmt.Errorf("the driver cannot deserialize (%T)", dc)
		}
		if err := s.Deserialize(img); err != nil {
			return err
		}
		return copyTo(dc, db.path)
	})
	if err != nil {
		return &EnvError{Path: db.path, Err: fmt.Errorf("deserialize: %w", describe(err))}
	}
	return nil
}

// VacuumInto writes a copy of the database to the new file path (VACUUM INTO).
func (db *DB) VacuumInto(ctx context.Context, path string) error {
	if _, err := db.admin.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return &EnvError{Path: db.path, Err: fmt.Errorf("vacuum into %s: %w", path, describe(err))}
	}
	return nil
}

// RestoreFrom makes the database what the file path, from VacuumInto, holds: SQLite's backup
// API copies it over the file in one write transaction.
func (db *DB) RestoreFrom(ctx context.Context, path string) error {
	src, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path}).String()+"?mode=ro")
	if err != nil {
		return &EnvError{Path: db.path, Err: err}
	}
	defer src.Close()
	err = db.raw(ctx, src, func(dc any) error { return copyTo(dc, db.path) })
	if err != nil {
		return &EnvError{Path: db.path, Err: fmt.Errorf("restore from %s: %w", path, describe(err))}
	}
	return nil
}

// copyTo copies the database of driver connection dc over the database at dst, whole.
func copyTo(dc any, dst string) error {
	bk, ok := dc.(backuper)
	if !ok {
		return fmt.Errorf("the driver has no backup API (%T)", dc)
	}
	b, err := bk.NewBackup(dst)
	if err != nil {
		return err
	}
	if _, err := b.Step(-1); err != nil {
		b.Finish()
		return err
	}
	return b.Finish()
}

// raw runs fn on one driver connection of pool.
func (db *DB) raw(ctx context.Context, pool *sql.DB, fn func(dc any) error) error {
	c, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(fn)
}
