package ui

import (
	"strings"
	"testing"

	"leaselab/engine"
)

// Whatever size the terminal says, the lab and the watch draw in at most MaxWidth×MaxHeight
// (a View of 2^32−1 rows ran the server out of memory), and the lab says why on its status line.
func TestAbsurdWindowsAreFitted(t *testing.T) {
	sizes := [][2]int{{1 << 31, 24}, {120, 1<<32 - 1}, {1<<32 - 1, 1<<32 - 1}, {MaxWidth + 1, MaxHeight + 1}}
	l := newLab(t, "after", 120, 40, engine.Overrides{})
	for _, s := range sizes {
		l.send(windowSize(s[0], s[1]))
		fw, fh, _ := FitWindow(s[0], s[1])
		checkSize(t, l.view(), fw, fh)
		l.must("the lab draws in at most 500×200 cells")
	}
	l.send(windowSize(120, 40))
	l.press(" ")
	checkSize(t, l.view(), 120, 40)
	if strings.Contains(l.view(), "draws in at most") {
		t.Error("the note stays after a step at a sane size")
	}
	w := newWatcher(t, newShared(t, 6).db, 80, 24)
	for _, s := range sizes {
		w.send(windowSize(s[0], s[1]))
		fw, fh, _ := FitWindow(s[0], s[1])
		checkSize(t, w.m.View(), fw, fh)
	}
}
