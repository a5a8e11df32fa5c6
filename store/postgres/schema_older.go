package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// An older leaselab's schema is recognised as leaselab's, refused with what to do, and rebuilt by
// --reset, as SQLite recognises its older schemas (store/schemacheck.go). It is never migrated.
// Two are recognised: the one before the due claim's indexes (issue 34), and the one before
// issue 20 (no dead letters, no NextAttemptUtc, no LastError, nor those indexes).

// ErrOlderSchema means the schema is an older leaselab's: this leaselab's statements need the
// columns of the new one. Nothing was changed.
var ErrOlderSchema = errors.New("a leaselab schema of an older version")

// dueIndexEdits turn schema.sql into the schema the leaselab before the due claim's indexes
// made: each pair is this schema's text and the older one's.
var dueIndexEdits = [][2]string{{`

-- The due claim's two indexes (retry backoff on): the unfinished rows that never failed, in
-- claim order, and those that failed, in the order their backoff ends. A due claim reads the
-- first of the one and the range whose backoff is over of the other, and never walks the rows
-- still waiting for their next attempt. Neither names a column a claim changes, so a claim
-- stays heap-only; a finalize's new row version is in neither.
CREATE INDEX OutboxMessages_Fresh
    ON OutboxMessages (CreatedAtUtc, Id) WHERE ProcessedAtUtc IS NULL AND NextAttemptUtc IS NULL;
CREATE INDEX OutboxMessages_Backoff
    ON OutboxMessages (NextAttemptUtc, CreatedAtUtc, Id) WHERE ProcessedAtUtc IS NULL AND NextAttemptUtc IS NOT NULL;
`, `
`}}

// olderEdits, after dueIndexEdits, turn schema.sql into the schema the leaselab before dead
// letters made: each pair is the newer schema's text and the older one's.
var olderEdits = [][2]string{
	{`CHECK (Status IN ('Pending', 'Processing', 'Processed', 'DeadLettered')),`, `CHECK (Status IN ('Pending', 'Processing', 'Processed')),`},
	{`    NextAttemptUtc timestamptz NULL,                -- after a failed attempt: not claimable before this
    LastError      text        NULL,                -- what the last failed attempt failed with
    -- A row is finished, out of the claim's index, exactly when it has a ProcessedAtUtc:
    -- Processed, or parked as a dead letter (DeadLettered, after its last allowed attempt).
    CHECK ((Status IN ('Processed', 'DeadLettered')) = (ProcessedAtUtc IS NOT NULL))`, `    -- A row is finished exactly when it has a ProcessedAtUtc: the claim's index relies on it.
    CHECK ((Status = 'Processed') = (ProcessedAtUtc IS NOT NULL))`},
}

// olderSchemas are the older schemas recognised, newest first: what each lacks, in words, and
// the edits that derive it from schema.sql.
var olderSchemas = []struct {
	what  string
	edits [][2]string
}{
	{"before the due claim's indexes: it has no OutboxMessages_Fresh nor OutboxMessages_Backoff", dueIndexEdits},
	{"before dead letters and retry backoff: it has no OutboxMessages.NextAttemptUtc", append(append([][2]string{}, dueIndexEdits...), olderEdits...)},
}

// olderSchemaSQL is the oldest leaselab schema recognised (before dead letters), derived from
// this one; ok is false when an edit no longer finds its text (a test keeps them in step).
func olderSchemaSQL() (def string, ok bool) { return olderSchemaSQLOf(len(olderSchemas) - 1) }

// olderSchemaSQLOf is olderSchemas[i]'s schema.sql.
func olderSchemaSQLOf(i int) (def string, ok bool) {
	def = schemaSQL
	for _, e := range olderSchemas[i].edits {
		if !strings.Contains(def, e[0]) {
			return "", false
		}
		def = strings.Replace(def, e[0], e[1], 1)
	}
	return def, true
}

// isOlderSchema says which older leaselab schema got, what a schema holds, is exactly ("" when
// none).
func isOlderSchema(ctx context.Context, tx pgx.Tx, got []fact) (string, error) {
	for i, o := range olderSchemas {
		def, ok := olderSchemaSQLOf(i)
		if !ok {
			continue
		}
		want, err := referenceFactsOf(ctx, tx, def)
		if err != nil {
			return "", err
		}
		if firstDifference(want, got) == "" {
			return o.what, nil
		}
	}
	return "", nil
}

// olderSchemaError is the refusal of an older leaselab's schema (what it lacks), with what to
// do; nil when it is not one.
func olderSchemaError(schema string, older string) error {
	if older == "" {
		return nil
	}
	return fmt.Errorf("schema %s: %w (%s); "+
		"this leaselab does not migrate it: pass --reset to drop its tables and make them again (its rows are deleted), or choose another schema; nothing was changed",
		schema, ErrOlderSchema, older)
}

// rebuildOlder drops an older leaselab schema's tables and makes this leaselab's, in tx (--reset).
func rebuildOlder(ctx context.Context, tx pgx.Tx, schema, mark string) error {
	if _, err := tx.Exec(ctx, `DROP TABLE OutboxMessages, Payments CASCADE`); err != nil {
		return fmt.Errorf("reset schema %s: %w", schema, describe(err))
	}
	return createTables(ctx, tx, schema, mark)
}
