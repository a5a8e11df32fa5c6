package chaos

import (
	"context"
	"database/sql"
	"time"

	"github.com/jackc/pgx/v5"
)

// scanFunc is one row's Scan, handed to a query's callback.
type scanFunc = func(...any) error

// queryTimeout bounds every query of the harness's own.
const queryTimeout = 5 * time.Second

// querySQLite runs q on a read-only connection of the harness's own to the SQLite file at path
// and hands each row to fn.
func querySQLite(ctx context.Context, path, q string, fn func(scanFunc) error) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	return eachRow(rows, fn)
}

// queryPostgres runs q on a connection of the harness's own to url (one the faults'
// pg_terminate_backend spares when url says so) and hands each row to fn.
func queryPostgres(ctx context.Context, url, q string, fn func(scanFunc) error) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	return eachRow(rows, fn)
}

// eachRow hands every row of rows (database/sql's or pgx's) to fn, stopping at its first error.
func eachRow(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}, fn func(scanFunc) error) error {
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
