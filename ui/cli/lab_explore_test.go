package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"leaselab/engine"
)

// TestLabExplore: the lab's explore key searches with the lab's toggles: with the atomic claim
// off it finds the naive claim's violation and writes its file, which the lab's own opener
// opens; with every guard on it says what was proved.
func TestLabExplore(t *testing.T) {
	b := backends()
	root := newLabRoot(b, nil, nil)
	defer root.Close()
	dir := &lazyDir{}
	defer dir.remove()
	search := labExplore(b, root, dir)
	var lines int
	toggles := map[string]bool{}
	for _, tg := range engine.Registry() { // as the lab passes them: every toggle
		toggles[tg.Name] = tg.Default
	}
	toggles[engine.ToggleAtomicClaim] = false
	out, err := search(context.Background(), "playground", toggles, func(string) { lines++ })
	if err != nil {
		t.Fatal(err)
	}
	if out.File == "" || !strings.Contains(out.Line, "a shortest schedule that breaks one-owner") {
		t.Fatalf("atomic claim off: %+v, want the one-owner violation and its file", out)
	}
	s, err := root.Open(context.Background(), out.File)
	if err != nil {
		t.Fatalf("the lab cannot open %s: %v", out.File, err)
	}
	if s == nil {
		t.Fatal("no session")
	}
	found := out.File
	toggles[engine.ToggleAtomicClaim] = true
	out, err = search(context.Background(), "playground", toggles, func(string) {})
	if err != nil || out.File != "" || !strings.HasPrefix(out.Line, "no schedule ") {
		t.Fatalf("every guard on: %+v, %v; want a proof", out, err)
	}
	// Each search has a folder of its own; the proof's (search-2) is removed with its database,
	// the violation's (search-1) kept for its file.
	if _, err := os.Stat(filepath.Join(dir.path, "search-2")); !os.IsNotExist(err) {
		t.Errorf("the proof's folder is still there: %v", err)
	}
	if _, err := os.Stat(found); err != nil {
		t.Errorf("the violation's file is gone: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := search(ctx, "playground", toggles, func(string) {}); err == nil {
		t.Error("a cancelled search did not say so")
	}
}
