// Package imports reads which packages the Go files of a folder import, for the tests that hold
// the project's layering (the command line speaks no SQL; the PostgreSQL store does not lean on
// the SQLite one).
package imports

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Find reads the imports of dir's non-test .go files and returns each import whose path match
// accepts, as "FILE imports PATH" in file order, and how many files it read.
func Find(dir string, match func(path string) bool) (found []string, files int, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	fset := token.NewFileSet()
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			return nil, files, err
		}
		files++
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return nil, files, fmt.Errorf("%s: import %s: %w", name, im.Path.Value, err)
			}
			if match(p) {
				found = append(found, name+" imports "+p)
			}
		}
	}
	return found, files, nil
}
