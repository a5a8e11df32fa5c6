package imports

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Find reads the imports of the folder's non-test files only, and names each one that matches.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a.go":      "package p\n\nimport (\n\t\"strings\"\n\tx \"fmt\"\n)\n",
		"b.go":      "package p\n",
		"a_test.go": "package p\n\nimport \"fmt\"\n",
		"notes.txt": "import \"fmt\"\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	found, files, err := Find(dir, func(p string) bool { return strings.HasPrefix(p, "f") })
	if err != nil || files != 2 || !slices.Equal(found, []string{"a.go imports fmt"}) {
		t.Fatalf("Find = %q, %d files, %v", found, files, err)
	}
}
