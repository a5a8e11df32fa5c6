package postgres

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

//go:embed schema.sql
var schemaSQL string

// querier is what both a pool and a transaction answer.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// schemaState reads whether schema exists and the comment leaselab left on it ("" when none).
func schemaState(ctx context.Context, q querier, schema string) (mark string, exists bool, err error) {
	var comment *string
	err = q.QueryRow(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, schema).Scan(&comment)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read schema %s: %w", schema, err)
	}
	if comment != nil {
		mark = *comment
	}
	return mark, true, nil
}

// prepareSchema makes schema ready for a new run, in tx, checking everything before the first
// write. An advisory lock on the schema's name makes two leaselabs starting at once take turns.
func prepareSchema(ctx context.Context, tx pgx.Tx, schema string, opts Options) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('leaselab:' || $1))`, schema); err != nil {
		return fmt.Errorf("lock schema %s: %w", schema, err)
	}
	mark, exists, err := schemaState(ctx, tx, schema)
	if err != nil {
		return err
	}
	if !exists {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			return fmt.Errorf("create schema %s: %w", schema, err)
		}
		mark := schemaMark
		if opts.temp {
			mark = runMark
		}
		return createTables(ctx, tx, schema, mark)
	}
	facts, err := schemaFacts(ctx, tx, schema)
	if err != nil {
		return err
	}
	if err := checkOurs(ctx, tx, schema, mark, facts); err != nil {
		if errors.Is(err, ErrOlderSchema) && opts.Reset && mark == schemaMark {
			return rebuildOlder(ctx, tx, schema, mark) // --reset: an older leaselab's schema, made again
		}
		return err
	}
	if len(facts) == 0 {
		return createTables(ctx, tx, schema, schemaMark) // an empty schema someone made for leaselab
	}
	var rows int64
	if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM OutboxMessages) + (SELECT count(*) FROM Payments)`).Scan(&rows); err != nil {
		return fmt.Errorf("count rows of schema %s: %w", schema, err)
	}
	switch {
	case rows == 0:
		// Empty already; restart the ids so that a run reads as it does on a new file.
	case !opts.Reset:
		return fmt.Errorf("schema %s: %w; nothing was changed", schema, ErrHoldsRows)
	}
	if _, err := tx.Exec(ctx, `TRUNCATE OutboxMessages, Payments RESTART IDENTITY`); err != nil {
		return fmt.Errorf("reset schema %s: %w", schema, describe(err))
	}
	return nil
}

// checkOurs returns nil when schema, which holds facts and has the comment mark, is leaselab's
// (what schema.sql builds, and leaselab's comment) or empty with no comment of another
// program's; otherwise ErrNotOurs, saying why.
func checkOurs(ctx context.Context, tx pgx.Tx, schema, mark string, facts []fact) error {
	if mark == runMark {
		mark = schemaMark // a run's own schema is leaselab's too (watch can read it)
	}
	if len(facts) == 0 {
		if mark != "" && mark != schemaMark {
			return fmt.Errorf("schema %s: %w: it is empty, but its comment %q is another program's; nothing was changed", schema, ErrNotOurs, mark)
		}
		return nil
	}
	if err := checkContents(ctx, tx, schema, facts); err != nil {
		return err
	}
	if mark != schemaMark {
		return fmt.Errorf("schema %s: %w: it has leaselab's tables but not the comment leaselab leaves on its schemas; nothing was changed", schema, ErrNotOurs)
	}
	return nil
}

// createTables runs schema.sql in schema (the connection's search_path) and marks it ours with
// mark (schemaMark, or runMark for a run's own).
func createTables(ctx context.Context, tx pgx.Tx, schema, mark string) error {
	if _, err := tx.Exec(ctx, schemaSQL); err != nil {
		return fmt.Errorf("create tables in %s: %w", schema, err)
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf("COMMENT ON SCHEMA %s IS '%s'", schema, mark)); err != nil {
		return fmt.Errorf("mark schema %s: %w", schema, err)
	}
	return nil
}

// Schema returns the statements that made the run's tables, for the report.
func (db *DB) Schema(ctx context.Context) (string, error) {
	return fmt.Sprintf("-- PostgreSQL, schema %s\n%s", db.t.schema, schemaSQL), nil
}
