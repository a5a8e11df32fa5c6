package sqlpane

import (
	"strings"
	"testing"
)

// TestWrapSpacesKeepsValuesWhole: a statement wraps at spaces, never inside a bound value.
func TestWrapSpacesKeepsValuesWhole(t *testing.T) {
	got := wrapSpaces("SET LockedUntilUtc = '2026-01-15T09:00:00.500Z'  → 1 row", 30)
	want := []string{"SET LockedUntilUtc =", "'2026-01-15T09:00:00.500Z'  →", "1 row"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := wrapSpaces("abcdefghij", 4); strings.Join(got, "|") != "abcd|efgh|ij" {
		t.Fatalf("long word: %q", got)
	}
}
