package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// An older leaselab's schema (before issue 20: no dead letters, no NextAttemptUtc, no
// LastError) is recognised as leaselab's, refused with what to do, and rebuilt by --reset, as
// SQLite recognises its older schemas (store/schemacheck.go). It is never migrated.

// ErrOlderSchema means the schema is an older leaselab's: this leaselab's statements need the
// columns of the new one. Nothing was changed.
var ErrOlderSchema = errors.New("a leaselab schema of an older version")

// olderEdits turn schema.sql into the schema the leaselab before dead letters made: each pair is
// this schema's text and the older one's.
var olderEdits = [][2]string{
	{`CHECK (Status IN ('Pending', 'Processing', 'Processed', 'DeadLettered')),`, `CHECK (Status IN ('Pending', 'Processing', 'Processed')),`},
	{`    NextAttemptUtc timestamptz NULL,                -- after a failed attempt: not claimable before this
    LastError      text        NULL,                -- what the last failed attempt failed with
    -- A row is finished, out of the claim's index, exactly when it has a ProcessedAtUtc:
    -- Processed, or parked as a dead letter (DeadLettered, after its last allowed attempt).
    CHECK ((Status IN ('Processed', 'DeadLettered')) = (ProcessedAtUtc IS NOT NULL))`, `    -- A row is finished exactly when it has a ProcessedAtUtc: the claim's index relies on it.
    CHECK ((Status = 'Processed') = (ProcessedAtUtc IS NOT NULL))`},
}

// olderSchemaSQL is the older leaselab's schema.sql, derived from this one; ok is false when an
// edit no longer finds its text (a test keeps them in step).
func olderSchemaSQL() (def string, ok bool) {
	def = schemaSQL
	for _, e := range olderEdits {
		if !strings.Contains(def, e[0]) {
			return "", false
		}
		def = strings.Replace(def, e[0], e[1], 1)
	}
	return def, true
}

// isOlderSchema says whether got, what a schema holds, is exactly the older leaselab's schema.
func isOlderSchema(ctx context.Context, tx pgx.Tx, got []fact) (bool, error) {
	def, ok := olderSchemaSQL()
	if !ok {
		return false, nil
	}
	want, err := referenceFactsOf(ctx, tx, def)
	if err != nil {
		return false, err
	}
	return firstDifference(want, got) == "", nil
}

// olderSchemaError is the refusal of an older leaselab's schema, with what to do; nil when it
// is not one.
func olderSchemaError(schema string, older bool) error {
	if !older {
		return nil
	}
	return fmt.Errorf("schema %s: %w (before dead letters and retry backoff: it has no OutboxMessages.NextAttemptUtc); "+
		"this leaselab does not migrate it: pass --reset to drop its tables and make them again (its rows are deleted), or choose another schema; nothing was changed",
		schema, ErrOlderSchema)
}

// rebuildOlder drops an older leaselab schema's tables and makes this leaselab's, in tx (--reset).
func rebuildOlder(ctx context.Context, tx pgx.Tx, schema, mark string) error {
	if _, err := tx.Exec(ctx, `DROP TABLE OutboxMessages, Payments CASCADE`); err != nil {
		return fmt.Errorf("reset schema %s: %w", schema, describe(err))
	}
	return createTables(ctx, tx, schema, mark)
}
