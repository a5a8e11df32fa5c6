package diagram

import (
	"fmt"
	"slices"
	"strings"

	"leaselab/ui/common"
)

// leaseLabel is what a bar carries: the message key and the lease version.
func leaseLabel(l *stLease) string {
	if l.Version > 0 {
		return fmt.Sprintf("%s v%d", l.Key, l.Version)
	}
	return l.Key
}

// laneCanvas is one lane being drawn: a row of labels and a row of bars per track, each as
// wide as the whole run.
type laneCanvas struct {
	labels, bars [][]rune
	cells        int
}

// track makes sure track t exists.
func (lc *laneCanvas) track(t int) {
	for len(lc.bars) <= t {
		lc.labels = append(lc.labels, []rune(common.Spaces(lc.cells)))
		lc.bars = append(lc.bars, []rune(common.Spaces(lc.cells)))
	}
}

// put writes s at x of row when the cells are free (of fill runes only, with inFill).
func put(row []rune, x int, s string, free func(rune) bool) bool {
	r := []rune(s)
	if x < 0 || x+len(r) > len(row) || slices.ContainsFunc(row[x:x+len(r)], func(c rune) bool { return !free(c) }) {
		return false
	}
	copy(row[x:], r)
	return true
}

func isSpace(r rune) bool { return r == ' ' }

func isFill(r rune) bool { return r == fillHeld || r == fillStuck || r == fillDone }

// laneLines draws each lane: for each track a line of labels (the keys above the claims) and
// a line of bars, the worker's name beside its first bar line. compact draws one line a track,
// the keys inside the bars, and puts what a worker did holding no lease on its first track.
func (st *spaceTime) laneLines(g stGeometry, paint func(int, string) string, compact bool) [][]string {
	if paint == nil {
		paint = func(_ int, s string) string { return s }
	}
	lo, hi := g.first*g.cw, (g.first+g.visible)*g.cw
	cells := max(len(st.Cols)*g.cw+1, hi)
	for _, l := range st.Leases {
		cells = max(cells, l.Start*g.cw+common.Width(leaseLabel(l))+1)
	}
	out := make([][]string, len(st.lanes))
	for li, lane := range st.lanes {
		lc := &laneCanvas{cells: cells}
		lc.track(0)
		var ends []int // the last cell each track has taken
		for _, l := range st.Leases {
			if l.lane != li {
				continue
			}
			from := l.Start * g.cw
			to := max(l.End*g.cw, l.Last*g.cw)
			if !compact {
				to = max(to, from+common.Width(leaseLabel(l))-1)
			}
			l.track = slices.IndexFunc(ends, func(e int) bool { return e+1 < from })
			if l.track < 0 {
				l.track, ends = len(ends), append(ends, 0)
			}
			ends[l.track] = to
			lc.track(l.track)
			DrawBar(lc.bars[l.track], l, g.cw)
		}
		for _, l := range st.Leases {
			if l.lane == li {
				lc.label(l, g.cw, lo, compact)
			}
		}
		lc.laneMarks(lane, g.cw, compact)
		for t := range lc.bars {
			name := ""
			if t == 0 {
				name = lane.name
			} else if strings.TrimSpace(string(lc.bars[t][lo:hi])+string(lc.labels[t][lo:hi])) == "" {
				continue // a track whose bars are all off screen
			}
			if label := string(lc.labels[t][lo:hi]); !compact && strings.TrimSpace(label) != "" {
				out[li] = append(out[li], strings.TrimRight(common.Spaces(g.gutter)+label, " "))
			}
			bar := strings.TrimRight(common.PadPlain(PlainText(name), g.gutter)+string(lc.bars[t][lo:hi]), " ")
			out[li] = append(out[li], paint(li, bar))
		}
	}
	return out
}

// label writes lease l's key and version above its claim, or at the window's left edge for a
// bar that began before it; compact, inside the bar, over its fill, where the window shows it.
func (lc *laneCanvas) label(l *stLease, cw, lo int, compact bool) {
	text, x := leaseLabel(l), l.Start*cw
	if !compact {
		if x < lo && l.End*cw >= lo {
			text, x = "<"+text, lo
		}
		put(lc.labels[l.track], x, text, isSpace)
		return
	}
	for x = max(x+2, lo); x+common.Width(text) < l.End*cw; x++ {
		if row := lc.bars[l.track]; (x == lo || isFill(row[x-1])) && put(row, x, text, isFill) {
			return
		}
	}
}

// laneMarks puts what a worker did holding no lease on the first track with room at its column
// (a new track when none has, unless compact), with the key of a provider call above it.
func (lc *laneCanvas) laneMarks(lane stLane, cw int, compact bool) {
	cols := make([]int, 0, len(lane.marks))
	for c := range lane.marks {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	for _, c := range cols {
		x := c * cw
		t := slices.IndexFunc(lc.bars, func(row []rune) bool { return row[x] == ' ' })
		switch {
		case t < 0 && compact:
			t = 0
		case t < 0:
			t = len(lc.bars)
			lc.track(t)
		}
		lc.bars[t][x] = lane.marks[c]
		if key := lane.keys[c]; key != "" && !compact {
			put(lc.labels[t], x, key+" ", isSpace)
		}
	}
}

// DrawBar draws lease l on a track: its fill from the claim to LockedUntilUtc, the cap there,
// and its marks (some, such as a late finalize, after the cap).
func DrawBar(row []rune, l *stLease, cw int) {
	for x := l.Start * cw; x < l.End*cw; x++ {
		row[x] = l.fillAt(x / cw)
	}
	row[l.End*cw] = FillEnd
	for c, r := range l.marks {
		row[c*cw] = r
	}
}
