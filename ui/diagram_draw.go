package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"leaselab/engine"
)

// diagramInput is everything the space-time diagram is drawn from: it is a pure function of it.
type diagramInput struct {
	Name          string         // the scenario
	Events        []engine.Event // oldest first
	Dropped       int            // events before Events that are no longer kept
	Workers       []string       // the lanes, in order
	Width, Height int
	Scroll        int    // columns scrolled back from the latest; 0 shows the latest
	Hint          string // the scroll and close keys in words, named by the key map
	// Paint colours lane i's name and bars, an extra: the marks and fills say it all without
	// colour. nil draws plain text.
	Paint func(lane int, s string) string
}

// Column widths in cells: wider when few columns fill the screen.
const (
	minColumnCells = 3
	maxColumnCells = 6
)

// stGeometry is where the diagram's columns fall on the screen.
type stGeometry struct {
	gutter, cw     int // the lane names' width; the cells of a column
	first, visible int // the first column on screen and how many fit
	scroll, most   int // the scroll in effect and its largest value
}

func (st *spaceTime) geometry(in diagramInput) stGeometry {
	g := stGeometry{gutter: width("clock") + 2}
	for _, l := range st.lanes {
		g.gutter = max(g.gutter, width(l.name)+2)
	}
	room := max(1, in.Width-g.gutter)
	n := max(1, len(st.cols))
	g.cw = min(max(room/n, minColumnCells), maxColumnCells)
	g.visible = max(1, room/g.cw)
	g.most = max(0, len(st.cols)-g.visible)
	g.scroll = min(max(in.Scroll, 0), g.most)
	g.first = max(0, len(st.cols)-g.visible-g.scroll)
	return g
}

// diagramScrollMax is the largest scroll that still moves the diagram.
func diagramScrollMax(in diagramInput) int {
	return buildSpaceTime(in.Events, in.Workers).geometry(in).most
}

// renderDiagram draws the diagram in exactly in.Height lines of at most in.Width cells.
func renderDiagram(in diagramInput) string {
	st := buildSpaceTime(in.Events, in.Workers)
	g := st.geometry(in)
	w := in.Width
	head := []string{st.titleLine(in, g)}
	head = append(head, st.ruler(g, w)...)
	lanes := st.laneLines(g, in.Paint)
	// Lanes first; then the legend, in a word a mark when short of lines; blank lines between
	// lanes only when there is room.
	room := in.Height - len(head)
	legend := flow("key  ", st.legend(false), " · ", w)
	if room-countLines(lanes) < len(legend) {
		legend = flow("key  ", st.legend(true), "  ", w)
	}
	var body []string
	spare := room - len(legend) - countLines(lanes)
	for i, l := range lanes {
		if i > 0 && spare >= len(lanes)-1 {
			body = append(body, "")
		}
		body = append(body, l...)
	}
	if len(legend) > max(0, room-len(body)) {
		legend = legend[:max(0, min(len(legend), room-len(body)))]
	}
	if over := len(body) + len(legend) - room; over > 0 && room > 0 {
		body = append(body[:max(0, len(body)-over-1)], fmt.Sprintf("… more lanes below: make the window %d lines taller", over+1))
	}
	lines := append(head, body...)
	lines = append(lines, legend...)
	lines = append(lines, momentLines(st.moments(), w, in.Height-len(lines))...)
	return strings.Join(box(lines, w, in.Height), "\n")
}

// momentLines are the run's moments under a heading, in room lines at most: the latest when
// not all fit.
func momentLines(ms []string, w, room int) []string {
	if len(ms) == 0 || room < 3 {
		return nil
	}
	out := []string{"", rule("What the bars show", w)}
	if n := room - len(out); len(ms) > n {
		ms = append([]string{fmt.Sprintf("… %d earlier", len(ms)-n+1)}, ms[len(ms)-n+1:]...)
	}
	for _, m := range ms {
		out = append(out, cut("  "+m, w))
	}
	return out
}

func countLines(ls [][]string) (n int) {
	for _, l := range ls {
		n += len(l)
	}
	return n
}

// titleLine names the diagram, the clock's zero and where the window is in the run.
func (st *spaceTime) titleLine(in diagramInput, g stGeometry) string {
	left := "SPACE-TIME " + in.Name + ": a column per event, lanes per worker"
	if len(st.cols) > 0 {
		left += ", clock 0s = " + engine.FormatClock(st.cols[0].at)
	}
	if in.Dropped > 0 {
		left += fmt.Sprintf(" (the last %d events)", len(in.Events))
	}
	right := "no events yet"
	if n := len(st.cols); n > 0 {
		right = fmt.Sprintf("columns %d–%d of %d", g.first+1, min(n, g.first+g.visible), n)
	}
	if g.most > 0 && in.Hint != "" {
		right += " · " + in.Hint
	}
	if width(left)+2+width(right) > in.Width {
		left = cut(left, max(0, in.Width-width(right)-2))
	}
	return pad(left, max(0, in.Width-width(right))) + right
}

// ruler is the scenario clock over the columns: a label where the time moves on (and at the
// first column on screen), on a second line when the first has no room.
func (st *spaceTime) ruler(g stGeometry, w int) []string {
	if len(st.cols) == 0 {
		return nil
	}
	t0 := st.cols[0].at
	lines := [2][]rune{[]rune(pad("clock", w)), []rune(spaces(w))}
	free := [2]int{g.gutter, g.gutter}
	for c := g.first; c < min(len(st.cols), g.first+g.visible); c++ {
		if c != g.first && st.cols[c].at.Equal(st.cols[c-1].at) {
			continue
		}
		label := []rune(offsetLabel(st.cols[c].at.Sub(t0)))
		x := g.gutter + (c-g.first)*g.cw
		for i := range lines {
			if x >= free[i] && x+len(label) <= w {
				copy(lines[i][x:], label)
				free[i] = x + len(label) + 1
				break
			}
		}
	}
	out := []string{strings.TrimRight(string(lines[0]), " ")}
	if s := strings.TrimRight(string(lines[1]), " "); s != "" {
		out = append(out, s)
	}
	return out
}

// offsetLabel is a time since the first column: "0s", "0.5s", "1.001s".
func offsetLabel(d time.Duration) string {
	if d < time.Second && d%time.Millisecond == 0 {
		return fmt.Sprintf("%gs", d.Seconds())
	}
	return d.Round(time.Millisecond).String()
}

// leaseLabel is what a bar carries above its claim: the message key and the lease version.
func leaseLabel(l *stLease) string {
	if l.version > 0 {
		return fmt.Sprintf("%s v%d", l.key, l.version)
	}
	return l.key
}

// laneLines draws each lane: for each track a line of labels and a line of bars, the worker's
// name beside its first bar line.
func (st *spaceTime) laneLines(g stGeometry, paint func(int, string) string) [][]string {
	if paint == nil {
		paint = func(_ int, s string) string { return s }
	}
	lo, hi := g.first*g.cw, (g.first+g.visible)*g.cw
	cells := max(len(st.cols)*g.cw+1, hi)
	for _, l := range st.leases {
		cells = max(cells, l.start*g.cw+width(leaseLabel(l)))
	}
	out := make([][]string, len(st.lanes))
	for li, lane := range st.lanes {
		var labels, bars [][]rune
		track := func(t int) {
			for len(bars) <= t {
				labels, bars = append(labels, []rune(spaces(cells))), append(bars, []rune(spaces(cells)))
			}
		}
		track(0)
		var ends []int // the last cell each track has taken
		for _, l := range st.leases {
			if l.lane != li {
				continue
			}
			from := l.start * g.cw
			to := max(l.end*g.cw, l.last*g.cw, from+width(leaseLabel(l))-1)
			l.track = slices.IndexFunc(ends, func(e int) bool { return e+1 < from })
			if l.track < 0 {
				l.track, ends = len(ends), append(ends, 0)
			}
			ends[l.track] = to
			track(l.track)
			drawBar(bars[l.track], l, g.cw)
		}
		// Labels go above their claim, or at the window's left edge for a bar that began before.
		for _, l := range st.leases {
			if l.lane != li {
				continue
			}
			label, x := []rune(leaseLabel(l)), l.start*g.cw
			if x < lo && l.end*g.cw >= lo {
				label, x = append([]rune{'<'}, label...), lo
			}
			if x+len(label) <= len(labels[l.track]) && blank(labels[l.track][x:x+len(label)]) {
				copy(labels[l.track][x:], label)
			}
		}
		// What the worker did holding no lease goes on the first track with room at its column.
		cols := make([]int, 0, len(lane.marks))
		for c := range lane.marks {
			cols = append(cols, c)
		}
		slices.Sort(cols)
		for _, c := range cols {
			x := c * g.cw
			t := slices.IndexFunc(bars, func(row []rune) bool { return row[x] == ' ' })
			if t < 0 {
				t = len(bars)
				track(t)
			}
			bars[t][x] = lane.marks[c]
		}
		for t := range bars {
			name := ""
			if t == 0 {
				name = lane.name
			}
			if label := string(labels[t][lo:hi]); strings.TrimSpace(label) != "" {
				out[li] = append(out[li], strings.TrimRight(spaces(g.gutter)+label, " "))
			}
			bar := strings.TrimRight(padPlain(plainText(name), g.gutter)+string(bars[t][lo:hi]), " ")
			out[li] = append(out[li], paint(li, bar))
		}
	}
	return out
}

// blank reports whether every cell of row is a space.
func blank(row []rune) bool { return !slices.ContainsFunc(row, func(r rune) bool { return r != ' ' }) }

// drawBar draws lease l on a track: its fill from the claim to LockedUntilUtc, the cap there,
// and its marks (some, such as a late finalize, after the cap).
func drawBar(row []rune, l *stLease, cw int) {
	for x := l.start * cw; x < l.end*cw; x++ {
		row[x] = l.fillAt(x / cw)
	}
	row[l.end*cw] = fillEnd
	for c, r := range l.marks {
		row[c*cw] = r
	}
}

// legendOf says each mark in words, the ones the lesson turns on first: a short window keeps
// those.
var legendOf = []struct {
	r           rune
	text, short string
}{
	{markClaim, "claim", "claim"}, {markReclaim, "reclaim (lease had ended)", "reclaim"},
	{fillHeld, "lease held", "held"}, {fillStuck, "owner crashed/paused", "owner down"},
	{fillDone, "row Processed", "Processed"}, {fillEnd, "LockedUntilUtc", "LockedUntilUtc"},
	{markFinal, "finalized", "finalized"}, {markRejected, "REJECTED: 0 rows, rolled back", "REJECTED"},
	{markViolate, "wrote WITHOUT OWNING", "NOT OWNER"}, {markCrash, "crash", "crash"},
	{markPause, "pause", "pause"}, {markResume, "wake", "wake"},
	{markTake, "take (UPDATE by Id)", "take"}, {markSelect, "select", "select"}, {markLoad, "load", "load"},
	{markCheck, "provider call", "call"}, {markExpired, "lease over before call", "expired"},
	{markRenew, "renewed", "renew"}, {markLost, "renewal lost", "lost"}, {markRestart, "restart", "restart"},
	{markBlocked, "blocked by a lease", "blocked"}, {markEmpty, "nothing to claim", "empty"},
}

// legend lists the marks the diagram uses, in words (in a word each when short).
func (st *spaceTime) legend(short bool) []string {
	used := map[rune]bool{}
	for _, lane := range st.lanes {
		for _, r := range lane.marks {
			used[r] = true
		}
	}
	for _, l := range st.leases {
		used[fillEnd] = true
		for _, r := range l.marks {
			used[r] = true
		}
		for _, f := range l.fills {
			used[f.fill] = true
		}
	}
	var items []string
	for _, e := range legendOf {
		switch {
		case used[e.r] && short:
			items = append(items, string(e.r)+" "+e.short)
		case used[e.r]:
			items = append(items, string(e.r)+" "+e.text)
		}
	}
	return items
}
