package postgres

import (
	"testing"

	"leaselab/internal/imports"
)

// TestDoesNotImportSQLiteStore: what the two backends share is in store/internal, so that a
// backend is a package of its own and the PostgreSQL one does not depend on the SQLite one.
func TestDoesNotImportSQLiteStore(t *testing.T) {
	found, _, err := imports.Find(".", func(p string) bool { return p == "leaselab/store" })
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: move what both backends need to store/internal", f)
	}
}
