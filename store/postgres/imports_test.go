package postgres

import (
	"testing"

	"leaselab/internal/imports"
)

// TestDoesNotImportSQLiteStore: what the two backends share is in store/internal, so that a
// backend is a package of its own and the PostgreSQL one does not depend on the SQLite one.
func TestDoesNotImportSQLiteStore(t *testing.T) {
	files, err := imports.Of(".")
	if err != nil {
		t.Fatal(err)
	}
	for name, paths := range files {
		for _, p := range paths {
			if p == "leaselab/store" {
				t.Errorf("%s imports leaselab/store: move what both backends need to store/internal", name)
			}
		}
	}
}
