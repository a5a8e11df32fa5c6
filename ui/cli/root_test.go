package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tempFolders lists the leaselab temporary folders in dir.
func tempFolders(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "leaselab-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLabRootOpenClose opens a scenario, opens the next one, and closes: each open gets a fresh
// temporary database, the previous one's folder is removed at once, and Close removes the last.
func TestLabRootOpenClose(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	r := newLabRoot(backends(), nil, nil)
	t.Cleanup(func() { r.Close() }) // a failed check still removes the lab's database
	s1, err := r.Open(ctx, "playground")
	if err != nil {
		t.Fatal(err)
	}
	p1 := r.DBPath()
	if !strings.HasPrefix(p1, tmp) || len(tempFolders(t, tmp)) != 1 {
		t.Fatalf("first open: db %q, folders %v", p1, tempFolders(t, tmp))
	}
	if _, err := s1.Script().Next(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Open(ctx, "after"); err != nil {
		t.Fatal(err)
	}
	p2 := r.DBPath()
	if _, err := os.Stat(p1); !errors.Is(err, os.ErrNotExist) || p2 == p1 || len(tempFolders(t, tmp)) != 1 {
		t.Fatalf("second open: first db %q still there (%v), second %q, folders %v", p1, err, p2, tempFolders(t, tmp))
	}
	r.Close()
	r.Close()
	if f := tempFolders(t, tmp); len(f) != 0 || r.DBPath() != "" {
		t.Fatalf("after Close: folders %v, db %q", f, r.DBPath())
	}
}

// TestLabRootRules refuses what a server must not open: a file path, an unknown name, and a
// scenario over the caps. Nothing is left behind.
func TestLabRootRules(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	file := filepath.Join(tmp, "mine.txt")
	if err := os.WriteFile(file, []byte("name: mine\nmessages: 2\nworkers: A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, open, want string
		builtin          bool
		caps             scenarioCaps
	}{
		{"a file, built-ins only", file, "unknown scenario", true, scenarioCaps{}},
		{"a file path out of the tree", "../../etc/passwd", "unknown scenario", true, scenarioCaps{}},
		{"more messages than the cap", "many-workers", "500 messages, more than the 100", true, scenarioCaps{messages: 100}},
		{"more workers than the cap", "many-workers", "8 workers, more than the 4", true, scenarioCaps{workers: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLabRoot(backends(), nil, nil)
			t.Cleanup(func() { r.Close() })
			r.builtinOnly, r.caps = tc.builtin, tc.caps
			_, err := r.Open(ctx, tc.open)
			var ue usageError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ue) {
				t.Fatalf("Open(%q): %v, want a usage error with %q", tc.open, err, tc.want)
			}
			if f := tempFolders(t, tmp); len(f) != 0 {
				t.Fatalf("left %v", f)
			}
		})
	}
	// The same file opens when files are allowed, as leaselab --scenario FILE does.
	r := newLabRoot(backends(), nil, nil)
	t.Cleanup(func() { r.Close() })
	if _, err := r.Open(ctx, file); err != nil {
		t.Fatalf("a file, files allowed: %v", err)
	}
}
