package store

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// A change to schema.sql's comments or layout must not make the files of that version
// unrecognisable: the definitions are compared without comments and extra white space.
func TestSchemaCommentsDoNotMatter(t *testing.T) {
	ctx := context.Background()
	reworded := regexp.MustCompile(`--[^\n]*`).ReplaceAllString(schemaSQL, "-- another comment")
	reworded = regexp.MustCompile(`[ \t]+`).ReplaceAllString(reworded, "  ")
	mem := filepath.Join(t.TempDir(), "x.db")
	db, err := open(ctx, mem, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.admin.ExecContext(ctx, reworded); err != nil {
		t.Fatal(err)
	}
	facts, err := readSchema(ctx, db.admin)
	if err != nil {
		t.Fatal(err)
	}
	if v, diff, err := recognize(ctx, facts); v != schemaVersion || err != nil {
		t.Fatalf("recognize(reworded schema) = %d %q %v, want %d", v, diff, err, schemaVersion)
	}
	if got := normalizeSQL("CREATE  TABLE t (\n a TEXT -- note\n, b 'x  -- y' )"); got != "create table t(a text,b'x  -- y')" {
		t.Fatalf("normalizeSQL = %q", got)
	}
}

// The write transaction checks again what Inspect saw: a file that gained a schema, or rows,
// in between is not touched.
func TestPrepareChecksAgainUnderTheLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "raced.db")
	db, err := Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stale := &Inspection{Path: path, Exists: true, Kind: KindNew}
	if err := db.prepare(ctx, stale, false); !errors.Is(err, errChanged) {
		t.Fatalf("prepare(stale: new) = %v, want errChanged", err)
	}
	if err := db.SeedBulk(ctx, 3, time.Now()); err != nil {
		t.Fatal(err)
	}
	seen := &Inspection{Path: path, Exists: true, Kind: KindCurrent, Version: schemaVersion}
	if err := db.prepare(ctx, seen, false); !errors.Is(err, ErrHoldsRows) {
		t.Fatalf("prepare(rows appeared) = %v, want ErrHoldsRows", err)
	}
	if c, err := countContents(ctx, db.admin, time.Now()); err != nil || c.Messages != 3 {
		t.Fatalf("after the refusals: %+v %v, want the 3 messages kept", c, err)
	}
	older := &Inspection{Path: path, Exists: true, Kind: KindOlder, Version: 1}
	if err := db.prepare(ctx, older, true); !errors.Is(err, errChanged) {
		t.Fatalf("prepare(stale: older) = %v, want errChanged", err)
	}
}
