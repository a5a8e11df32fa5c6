package ui

import (
	"strings"
	"testing"
	"time"
)

// A LockedBy that another process wrote full of terminal escapes is shown escaped by the watch,
// in the table and in "who holds what": the screen never carries the raw ESC or BEL.
func TestWatchShowsForeignLockedByEscaped(t *testing.T) {
	s := newShared(t, 3)
	s.claim("Ev\x1b]0;x\x07", watchT0, 2*time.Second) // written by SQLite, as any process could
	w := newWatcher(t, s.db, 120, 40)
	v := w.m.View()
	if strings.ContainsAny(v, "\x1b\x07") {
		t.Fatalf("raw control characters on the watch screen:\n%q", v)
	}
	if strings.Count(v, `Ev\x1b]0;x\x07`) < 2 {
		t.Fatalf("the escaped LockedBy is not in the table and the holders:\n%s", v)
	}
}
