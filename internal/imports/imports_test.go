package imports

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Of reads the imports of the folder's non-test files only, each file's sorted.
func TestOf(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a.go":      "package p\n\nimport (\n\t\"strings\"\n\tx \"fmt\"\n)\n",
		"b.go":      "package p\n",
		"a_test.go": "package p\n\nimport \"testing\"\n",
		"notes.txt": "import \"os\"\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got["a.go"], []string{"fmt", "strings"}) || len(got["b.go"]) != 0 {
		t.Fatalf("Of = %v", got)
	}
}
