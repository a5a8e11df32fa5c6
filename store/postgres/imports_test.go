package postgres

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDoesNotImportSQLiteStore: what the two backends share is in store/internal, so that a
// backend is a package of its own and the PostgreSQL one does not depend on the SQLite one.
func TestDoesNotImportSQLiteStore(t *testing.T) {
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "leaselab/store" {
				t.Errorf("%s imports leaselab/store: move what both backends need to store/internal", name)
			}
		}
	}
}
