package cli

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The command line never speaks SQL: no file of it but a test imports a store (main wires them,
// through Backends).
func TestImportsNoStore(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "leaselab/store" || strings.HasPrefix(path, "leaselab/store/") {
				t.Errorf("%s imports %s: the command line reaches the databases only through Backends", f, path)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d files: is the test in the folder of package cli?", checked)
	}
}
