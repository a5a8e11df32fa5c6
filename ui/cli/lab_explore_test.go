package cli

import (
	"context"
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
	for _, tg := range engine.Toggles() {
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
	toggles[engine.ToggleAtomicClaim] = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := search(ctx, "playground", toggles, func(string) {}); err == nil {
		t.Error("a cancelled search did not say so")
	}
}
