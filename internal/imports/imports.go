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
	"sort"
	"strconv"
	"strings"
)

// Of returns, for each non-test .go file of dir (by its name), the paths it imports.
func Of(dir string) (map[string][]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	out := map[string][]string{}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		paths := []string{}
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: import %s: %w", name, im.Path.Value, err)
			}
			paths = append(paths, p)
		}
		sort.Strings(paths)
		out[name] = paths
	}
	return out, nil
}
