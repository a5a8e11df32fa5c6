package ui

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// OSFiles makes a new file, mode 0600 (a transcript holds payment data), and never opens one
// that is there.
func TestOSFilesCreateIsExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.md")
	f, err := OSFiles{}.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v %v", p, st.Mode(), err)
	}
	if _, err := (OSFiles{}).Create(p); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second create: %v, want fs.ErrExist", err)
	}
	if err := (OSFiles{}).Remove(p); err != nil {
		t.Error(err)
	}
}
