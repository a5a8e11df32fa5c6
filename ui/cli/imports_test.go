package cli

import (
	"strings"
	"testing"

	"leaselab/internal/imports"
)

// The command line never speaks SQL: no file of it but a test imports a store (main wires them,
// through Backends).
func TestImportsNoStore(t *testing.T) {
	files, err := imports.Of(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("checked %d files: is the test in the folder of package cli?", len(files))
	}
	for name, paths := range files {
		for _, p := range paths {
			if p == "leaselab/store" || strings.HasPrefix(p, "leaselab/store/") {
				t.Errorf("%s imports %s: the command line reaches the databases only through Backends", name, p)
			}
		}
	}
}
