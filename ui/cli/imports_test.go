package cli

import (
	"strings"
	"testing"

	"leaselab/internal/imports"
)

// The command line never speaks SQL: no file of it but a test imports a store (main wires them,
// through Backends).
func TestImportsNoStore(t *testing.T) {
	found, files, err := imports.Find(".", func(p string) bool {
		return p == "leaselab/store" || strings.HasPrefix(p, "leaselab/store/")
	})
	if err != nil || files < 10 {
		t.Fatalf("checked %d files (is the test in the folder of package cli?): %v", files, err)
	}
	for _, f := range found {
		t.Errorf("%s: the command line reaches the databases only through Backends", f)
	}
}
