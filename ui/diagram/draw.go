package diagram

import (
	"fmt"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Input is everything the space-time diagram is drawn from: it is a pure function of it.
type Input struct {
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
	MinColumnCells = 3
	MaxColumnCells = 6
)

// stGeometry is where the diagram's columns fall on the screen.
type stGeometry struct {
	gutter, cw     int // the lane names' width; the cells of a column
	first, visible int // the first column on screen and how many fit
	scroll, most   int // the scroll in effect and its largest value
}

func (st *spaceTime) geometry(in Input) stGeometry {
	g := stGeometry{gutter: common.Width("clock") + 2}
	for _, l := range st.lanes {
		g.gutter = max(g.gutter, common.Width(l.name)+2)
	}
	room := max(1, in.Width-g.gutter)
	n := max(1, len(st.Cols))
	g.cw = min(max(room/n, MinColumnCells), MaxColumnCells)
	g.visible = max(1, room/g.cw)
	g.most = max(0, len(st.Cols)-g.visible)
	g.scroll = min(max(in.Scroll, 0), g.most)
	g.first = max(0, len(st.Cols)-g.visible-g.scroll)
	return g
}

// ScrollMax is the largest scroll that still moves the diagram.
func ScrollMax(in Input) int {
	return Build(in.Events, in.Workers).geometry(in).most
}

// Render draws the diagram in exactly in.Height lines of at most in.Width cells.
func Render(in Input) string {
	st := Build(in.Events, in.Workers)
	g := st.geometry(in)
	w := in.Width
	head := []string{st.TitleLine(in, g)}
	head = append(head, st.ruler(g, w)...)
	// Lanes first, then the legend (a word a mark when short of lines); when even that does not
	// fit, compact lanes (keys inside the bars); then as many lanes as fit, and the legend's
	// first lines. Blank lines between lanes only when there is room.
	room := max(0, in.Height-len(head))
	lanes := st.laneLines(g, in.Paint, false)
	legend := common.Flow("key  ", st.legend(false), " · ", w)
	if countLines(lanes)+len(legend) > room {
		legend = common.Flow("key  ", st.legend(true), "  ", w)
	}
	if countLines(lanes)+len(legend) > room {
		lanes = st.laneLines(g, in.Paint, true)
	}
	keep := min(len(legend), max(0, room-countLines(lanes)))
	if countLines(lanes)+keep > room || keep < min(len(legend), 2) {
		keep = min(len(legend), 2, room)
	}
	legend = legend[:keep]
	laneRoom := room - keep
	spare := laneRoom - countLines(lanes) - (len(lanes) - 1)
	var body []string
	for i, l := range lanes {
		if i > 0 && spare >= 0 {
			body = append(body, "")
		}
		last := i == len(lanes)-1
		if len(body)+len(l) > laneRoom-1 && !(last && len(body)+len(l) <= laneRoom) {
			hidden := len(lanes) - i
			body = append(body[:min(len(body), max(0, laneRoom-1))], fmt.Sprintf("… %d more %s below: a taller window shows them",
				hidden, common.Plural(hidden, "worker")))
			break
		}
		body = append(body, l...)
	}
	lines := append(head, body...)
	lines = append(lines, legend...)
	lines = append(lines, momentLines(st.moments(), w, in.Height-len(lines))...)
	return strings.Join(common.Box(lines, w, in.Height), "\n")
}

func countLines(ls [][]string) (n int) {
	for _, l := range ls {
		n += len(l)
	}
	return n
}

// TitleLine names the diagram, the clock's zero and where the window is in the run.
func (st *spaceTime) TitleLine(in Input, g stGeometry) string {
	left := st.title(in)
	right := "no events yet"
	if n := len(st.Cols); n > 0 {
		right = fmt.Sprintf("columns %d–%d of %d", g.first+1, min(n, g.first+g.visible), n)
	}
	if g.most > 0 && in.Hint != "" {
		right += " · " + in.Hint
	}
	if common.Width(left)+2+common.Width(right) > in.Width {
		left = common.Cut(left, max(0, in.Width-common.Width(right)-2))
	}
	return common.Pad(left, max(0, in.Width-common.Width(right))) + right
}

// title names the diagram and the clock's zero, and says when it shows only the latest events.
func (st *spaceTime) title(in Input) string {
	s := "SPACE-TIME " + in.Name + ": a column per event, lanes per worker"
	if len(st.Cols) > 0 {
		s += ", clock 0s = " + engine.FormatClock(st.Cols[0].At)
	}
	if in.Dropped > 0 {
		s += fmt.Sprintf(" (the last %d events)", len(in.Events))
	}
	return s
}

// ruler is the scenario clock over the columns: a label where the time moves on (and at the
// first column on screen), on a second line when the first has no room.
func (st *spaceTime) ruler(g stGeometry, w int) []string {
	if len(st.Cols) == 0 {
		return nil
	}
	t0 := st.Cols[0].At
	lines := [2][]rune{[]rune(common.Pad("clock", w)), []rune(common.Spaces(w))}
	free := [2]int{g.gutter, g.gutter}
	for c := g.first; c < min(len(st.Cols), g.first+g.visible); c++ {
		if c != g.first && st.Cols[c].At.Equal(st.Cols[c-1].At) {
			continue
		}
		label := []rune(offsetLabel(st.Cols[c].At.Sub(t0)))
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
