package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"leaselab/engine"
	"leaselab/store"
)

// Files is the package's functions with engine's types: a file it made opens again, read-only
// too, and a failure is a nil engine.Backend (not a nil *store.DB inside a non-nil interface)
// with the store's EnvError.
func TestFilesCreateOpenAndFail(t *testing.T) {
	ctx := context.Background()
	var files store.Files
	path := filepath.Join(t.TempDir(), "f.db")
	if err := files.Check(ctx, path, false); err != nil {
		t.Fatalf("Check(new file) = %v", err)
	}
	db, err := files.Create(ctx, path, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SeedBulk(ctx, 3, t0); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := files.Check(ctx, path, false); !errors.Is(err, store.ErrHoldsRows) {
		t.Errorf("Check(file with rows, no reset) = %v, want ErrHoldsRows", err)
	}
	if err := files.CheckOpen(ctx, path); err != nil {
		t.Errorf("CheckOpen = %v", err)
	}
	for _, readOnly := range []bool{false, true} {
		db, err := files.Open(ctx, path, readOnly)
		if err != nil {
			t.Fatalf("Open(readOnly %v) = %v", readOnly, err)
		}
		if c, err := db.Counts(ctx); err != nil || c.OutboxPending != 3 {
			t.Errorf("Open(readOnly %v): counts %+v, %v; want 3 pending", readOnly, c, err)
		}
		db.Close()
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	db, err = files.Open(ctx, missing, true)
	var env *engine.EnvError
	if db != nil || !errors.As(err, &env) {
		t.Errorf("Open(missing) = %#v, %v; want a nil Backend and an EnvError", db, err)
	}
	if err := files.CheckOpen(ctx, missing); !errors.As(err, &env) {
		t.Errorf("CheckOpen(missing) = %v, want an EnvError", err)
	}
}
