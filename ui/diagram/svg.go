package diagram

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"leaselab/engine"
	"leaselab/ui/common"
)

// The space-time diagram as a picture for slides and handouts (leaselab run --diagram, and the
// transcript's picture): the same model as the terminal's (Build: the same columns, lanes,
// leases, marks, legend and moments), drawn whole, as plain SVG 1.1 sized to its content. It is
// drawn for a projector: dark ink on white paper, every mark a letter and every fill a pattern
// (solid, hatched, dotted) as well as a colour, and nothing a reader needs in grey (grey is
// for the column rules only). Every text from the run is escaped (encoding/xml): a lesson's
// key may hold < or &.

// SVG geometry, in pixels: a monospace font of svgFont px, whose characters are about
// svgCharW wide.
const (
	svgFont    = 14
	svgCharW   = 8.4
	svgColW    = 30 // one column of the diagram
	svgMargin  = 16
	svgLabelH  = 18 // the line of lease labels above a track's bars
	svgBarH    = 26 // the line of bars and marks
	svgLaneGap = 12
	svgMarkR   = 10
)

// Colours: ink on paper; the fills differ by pattern too, and the alarms by their letter.
const (
	svgInk    = "#111111"
	svgPaper  = "#ffffff"
	svgRule   = "#c8c8c8" // column rules and lane separators only
	svgHeld   = "#1f4e79"
	svgStuck  = "#8b1a1a"
	svgDone   = "#2e6b30"
	svgAlarm  = "#b00000"
	svgAlarmF = "#ffe3e3"
	svgFonts  = "DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, monospace"
)

// alarmMarks are the marks drawn in the alarm colour (their letters say it as well).
var alarmMarks = map[rune]bool{markRejected: true, markViolate: true, markCrash: true, markLost: true}

// Shape is what a diagram shows, without where: its lanes, its event columns, its leases and
// every mark. Two drawings of one run (the lab's, the SVG) have the same Shape.
type Shape struct {
	Lanes   []string
	Columns int      // every column: the events' and the lease ends'
	Events  []string // each event column's event as the log says it, in column order
	Leases  []string // each bar's label ("PAY-001 v1"), in claim order
	Marks   []string // "LANE COLUMN MARK", lane by lane, in column order
}

// ShapeOf is the Shape of the diagram of in's events and workers.
func ShapeOf(in Input) Shape {
	st := Build(in.Events, in.Workers)
	var s Shape
	for _, l := range st.lanes {
		s.Lanes = append(s.Lanes, PlainText(l.name))
	}
	s.Columns = len(st.Cols)
	for _, c := range st.Cols {
		if c.Ev != nil {
			s.Events = append(s.Events, PlainText(c.Ev.String()))
		}
	}
	for _, l := range st.Leases {
		s.Leases = append(s.Leases, leaseLabel(l))
	}
	for li, lane := range st.lanes {
		for _, m := range st.laneMarks(li) {
			s.Marks = append(s.Marks, fmt.Sprintf("%s %d %c", PlainText(lane.name), m.col, m.r))
		}
	}
	return s
}

// placedMark is a mark at a column of a lane, on a lease or on the lane itself.
type placedMark struct {
	col   int
	r     rune
	lease *stLease // nil: a mark made holding no lease
}

// laneMarks are every mark of lane li, in column order.
func (st *spaceTime) laneMarks(li int) []placedMark {
	var out []placedMark
	for c, r := range st.lanes[li].marks {
		out = append(out, placedMark{c, r, nil})
	}
	for _, l := range st.Leases {
		if l.lane == li {
			for c, r := range l.marks {
				out = append(out, placedMark{c, r, l})
			}
		}
	}
	slices.SortFunc(out, func(a, b placedMark) int { return a.col - b.col })
	return out
}

// svgTextW is the width of s in the SVG's monospace font.
func svgTextW(s string) float64 { return float64(common.Width(s)) * svgCharW }

// esc is s escaped for XML text and attribute values, control characters made '?'.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(PlainText(s)))
	return b.String()
}

// svgLane is one lane laid out: its leases on tracks, its own marks on the first track with
// room.
type svgLane struct {
	name   string
	tracks int
	track  map[*stLease]int
	marks  map[int]int // a lane mark's column → its track
}

// layoutLane puts lane li's leases on tracks (a bar and its label need their columns free) and
// its lane marks on the first track whose bars leave their column free, as the terminal does.
func (st *spaceTime) layoutLane(li int) svgLane {
	sl := svgLane{name: st.lanes[li].name, tracks: 1, track: map[*stLease]int{}, marks: map[int]int{}}
	var ends []int      // the last column each track has taken, bar and label
	var bars [][][2]int // each track's bars, as column spans
	for _, l := range st.Leases {
		if l.lane != li {
			continue
		}
		labelCols := int(math.Ceil(svgTextW(leaseLabel(l)) / svgColW))
		to := max(l.End, l.Last, l.Start+labelCols-1)
		t := slices.IndexFunc(ends, func(e int) bool { return e < l.Start })
		if t < 0 {
			t, ends, bars = len(ends), append(ends, 0), append(bars, nil)
		}
		ends[t] = to
		bars[t] = append(bars[t], [2]int{l.Start, max(l.End, l.Last)})
		sl.track[l] = t
		sl.tracks = max(sl.tracks, t+1)
	}
	free := func(t, c int) bool {
		return t >= len(bars) || !slices.ContainsFunc(bars[t], func(b [2]int) bool { return b[0] <= c && c <= b[1] })
	}
	cols := make([]int, 0, len(st.lanes[li].marks))
	for c := range st.lanes[li].marks {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	for _, c := range cols {
		t := 0
		for !free(t, c) {
			t++
		}
		sl.marks[c] = t
		sl.tracks = max(sl.tracks, t+1)
		for len(bars) <= t {
			bars = append(bars, nil)
		}
		bars[t] = append(bars[t], [2]int{c, c})
	}
	return sl
}

// svgWriter accumulates the picture's elements, and how wide and tall they reach.
type svgWriter struct {
	b    strings.Builder
	w, h float64
}

func (s *svgWriter) printf(format string, a ...any) { fmt.Fprintf(&s.b, format, a...) }

// text writes one line of text at x, y (its baseline), escaped, and widens the picture to it.
func (s *svgWriter) text(x, y float64, class, str string, attrs string) {
	s.printf(`<text x="%.1f" y="%.1f" class="%s"%s>%s</text>`+"\n", x, y, class, attrs, esc(str))
	s.w = max(s.w, x+svgTextW(str)+svgMargin)
	s.h = max(s.h, y+svgMargin)
}

// WriteSVG writes the diagram of in's events and workers (in.Name names it; its size, scroll
// and paint are the terminal's and are not used) as an SVG 1.1 document, every column of the
// run drawn, sized to its content: the title, the clock's ruler, a lane per worker with a bar
// per lease from its claim to its LockedUntilUtc and a lettered mark per event, the legend in
// words and the moments the bars show. Each column and each mark carries its event in words as
// its <title>, which a browser shows on hover.
func WriteSVG(w io.Writer, in Input) error {
	st := Build(in.Events, in.Workers)
	g := newSVGGrid(st)
	s := &svgWriter{w: g.right + svgMargin}
	y := float64(svgMargin + svgFont + 2)
	s.text(svgMargin, y, "title", st.title(in), "")
	rulerTop := y + 8
	y = g.ruler(s, rulerTop)
	lanes, lanesBottom := g.lanes(s, y)
	y = g.legend(s, lanesBottom)
	s.h = max(s.h, y+svgMargin)
	cols := g.columnRules(rulerTop, lanesBottom)

	bw := bufio.NewWriter(w)
	writeSVGHead(bw, s.w, s.h, st.title(in))
	bw.WriteString(cols)
	bw.WriteString(lanes)
	bw.WriteString(s.b.String())
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// svgGrid places the diagram's columns: a gutter for the lane names, then one column per
// event or lease end.
type svgGrid struct {
	st            *spaceTime
	gutter, right float64
}

func newSVGGrid(st *spaceTime) svgGrid {
	gutter := svgTextW("clock")
	for _, l := range st.lanes {
		gutter = max(gutter, svgTextW(PlainText(l.name)))
	}
	gutter += 2 * svgMargin
	return svgGrid{st: st, gutter: gutter, right: gutter + float64(len(st.Cols))*svgColW}
}

// colX is the middle of column c.
func (g svgGrid) colX(c int) float64 { return g.gutter + float64(c)*svgColW + svgColW/2 }

// ruler draws the clock since the first column, where it moves on, on two lines when the
// labels would overlap; it returns the y below it.
func (g svgGrid) ruler(s *svgWriter, top float64) float64 {
	st := g.st
	y := top + svgFont + 4
	s.text(svgMargin, y, "ruler", "clock", "")
	if len(st.Cols) > 0 {
		t0 := st.Cols[0].At
		free := [2]float64{g.gutter, g.gutter}
		for c := range st.Cols {
			if c > 0 && st.Cols[c].At.Equal(st.Cols[c-1].At) {
				continue
			}
			label := offsetLabel(st.Cols[c].At.Sub(t0))
			x := g.colX(c) - svgColW/2 + 2
			for i := range free {
				if x >= free[i] {
					s.text(x, y+float64(i)*(svgFont+4), "ruler", label, "")
					free[i] = x + svgTextW(label) + svgCharW
					break
				}
			}
		}
	}
	return y + svgFont + 4 + 6
}

// lanes draws the lanes from y, each as tall as its tracks, and returns the separators between
// them (drawn under everything) and the y below the last.
func (g svgGrid) lanes(s *svgWriter, y float64) (string, float64) {
	st := g.st
	var seps strings.Builder
	for li := range st.lanes {
		sl := st.layoutLane(li)
		top := y
		trackY := func(t int) float64 { return top + float64(t)*(svgLabelH+svgBarH) + svgLabelH } // a track's bar line
		s.printf("<g class=\"lane\" id=\"lane-%d\">\n", li)
		s.text(svgMargin, trackY(0)+svgBarH/2+5, "lane-name", sl.name, "")
		for _, l := range st.Leases {
			if l.lane == li {
				s.lease(l, engine.FormatClock(st.Cols[l.Start].At), trackY(sl.track[l]), g.colX)
			}
		}
		for _, m := range st.laneMarks(li) {
			ty := trackY(sl.marks[m.col])
			if m.lease != nil {
				ty = trackY(sl.track[m.lease])
			} else if key := st.lanes[li].keys[m.col]; key != "" {
				s.text(g.colX(m.col)-svgColW/2+2, ty-5, "label", key, "")
			}
			s.mark(li, m, g.colX(m.col), ty+svgBarH/2, st.Cols[m.col].Ev)
		}
		s.printf("</g>\n")
		y = trackY(sl.tracks-1) + svgBarH + svgLaneGap
		if li < len(st.lanes)-1 {
			fmt.Fprintf(&seps, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" class="sep"/>`+"\n", svgMargin, y-svgLaneGap/2, g.right, y-svgLaneGap/2)
		}
	}
	return seps.String(), y
}

// legend draws the key in words from y, each with its mark or fill drawn beside it, flowed to
// the width, then the moments whole (the picture has the room the screen has not); it returns
// the y of its last line.
func (g svgGrid) legend(s *svgWriter, y float64) float64 {
	y += svgFont + 6
	s.text(svgMargin, y, "heading", "Key", "")
	x := svgMargin + svgTextW("Key  ")
	width := max(s.w, 720)
	for _, e := range g.st.legendItems() {
		itemW := 26 + svgTextW(e.text) + 2*svgCharW
		if x+itemW > width-svgMargin && x > svgMargin+svgTextW("Key  ") {
			x, y = svgMargin+svgTextW("Key  "), y+svgBarH
		}
		s.swatch(e.r, x+10, y-5)
		s.text(x+24, y, "legend", e.text, "")
		x += itemW
	}
	if ms := g.st.moments(); len(ms) > 0 {
		y += svgBarH + 6
		s.text(svgMargin, y, "heading", "What the bars show", "")
		for _, m := range ms {
			y += svgFont + 6
			s.text(svgMargin+2*svgCharW, y, "moment", m, "")
		}
	}
	s.w = max(s.w, width)
	return y
}

// columnRules are the column rules, drawn first, under everything: one per column, its event
// as its title.
func (g svgGrid) columnRules(top, bottom float64) string {
	var cols strings.Builder
	for c, col := range g.st.Cols {
		title := "LockedUntilUtc " + engine.FormatClock(col.At) + ": a lease ends here"
		class := "end"
		if col.Ev != nil {
			title, class = col.Ev.String(), "event"
		}
		fmt.Fprintf(&cols, `<g class="%s" id="col-%d"><title>%s</title><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/></g>`+"\n",
			class, c, esc(title), g.colX(c), top+4, g.colX(c), bottom-svgLaneGap)
	}
	return cols.String()
}

// writeSVGHead writes the document's start: its size, title, styles and fill patterns.
func writeSVGHead(bw *bufio.Writer, w, h float64, title string) {
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="%s" font-size="%d">
<title>%s</title>
<desc>leaselab: the space-time diagram of a run, a lane per worker and a bar per lease, drawn from the lab's model of its events</desc>
<style type="text/css">
text { fill: %s; }
.title, .heading, .lane-name { font-weight: bold; }
.title { font-size: 16px; }
.mark text { font-weight: bold; text-anchor: middle; }
.event line, .end line, .sep { stroke: %s; stroke-width: 1; }
.end line { stroke-dasharray: 3 3; }
</style>
<defs>
<pattern id="fill-stuck" patternUnits="userSpaceOnUse" width="8" height="8"><rect width="8" height="8" fill="%s"/><path d="M0,8 L8,0 M-2,2 L2,-2 M6,10 L10,6" stroke="%s" stroke-width="2.5"/></pattern>
<pattern id="fill-done" patternUnits="userSpaceOnUse" width="6" height="6"><rect width="6" height="6" fill="%s"/><circle cx="3" cy="3" r="1.4" fill="%s"/></pattern>
</defs>
<rect width="100%%" height="100%%" fill="%s"/>
`, w, h, w, h, svgFonts, svgFont, esc(title), svgInk, svgRule, svgPaper, svgStuck, svgPaper, svgDone, svgPaper)
}

// fillPaint is how a bar's fill is painted: solid while held, hatched while its owner is down,
// dotted once the row is Processed.
func fillPaint(r rune) string {
	switch r {
	case fillStuck:
		return "url(#fill-stuck)"
	case fillDone:
		return "url(#fill-done)"
	}
	return svgHeld
}

// lease draws lease l's bar on the track whose bar line starts at y: its fills from the claim's
// column to LockedUntilUtc's, the cap there, and its label above the claim.
func (s *svgWriter) lease(l *stLease, claimed string, y float64, colX func(int) float64) {
	s.printf("<g class=\"lease\"><title>%s</title>\n", esc(fmt.Sprintf("%s, claimed at %s, LockedUntilUtc %s",
		leaseLabel(l), claimed, engine.FormatClock(l.Until))))
	mid := y + svgBarH/2
	for i, f := range l.fills {
		to := l.End
		if i+1 < len(l.fills) {
			to = l.fills[i+1].col
		}
		if to <= f.col {
			continue
		}
		s.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="12" fill="%s" stroke="%s" stroke-width="1"/>`+"\n",
			colX(f.col), mid-6, colX(to)-colX(f.col), fillPaint(f.fill), svgInk)
	}
	s.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`+"\n",
		colX(l.End), mid-11, colX(l.End), mid+11, svgInk)
	s.text(colX(l.Start)-svgColW/2+2, y-5, "label", leaseLabel(l), "")
	s.printf("</g>\n")
}

// mark draws mark m of lane at its centre x, y, its event in words as its title.
func (s *svgWriter) mark(lane int, m placedMark, x, y float64, ev *engine.Event) {
	title := string(m.r)
	if ev != nil {
		title = ev.String()
	}
	stroke, fill := svgInk, svgPaper
	if alarmMarks[m.r] {
		stroke, fill = svgAlarm, svgAlarmF
	}
	s.printf(`<g class="mark" id="mark-%d-%d"><title>%s</title><circle cx="%.1f" cy="%.1f" r="%d" fill="%s" stroke="%s" stroke-width="2"/>`,
		lane, m.col, esc(title), x, y, svgMarkR, fill, stroke)
	s.printf(`<text x="%.1f" y="%.1f" style="fill: %s">%s</text></g>`+"\n", x, y+5, stroke, esc(string(m.r)))
}

// swatch draws a legend entry's mark or fill centred at x, y.
func (s *svgWriter) swatch(r rune, x, y float64) {
	switch {
	case isFill(r):
		s.printf(`<rect x="%.1f" y="%.1f" width="20" height="12" fill="%s" stroke="%s" stroke-width="1"/>`+"\n", x-10, y-6, fillPaint(r), svgInk)
	case r == FillEnd:
		s.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`+"\n", x, y-9, x, y+9, svgInk)
	default:
		stroke, fill := svgInk, svgPaper
		if alarmMarks[r] {
			stroke, fill = svgAlarm, svgAlarmF
		}
		s.printf(`<g class="swatch"><circle cx="%.1f" cy="%.1f" r="%d" fill="%s" stroke="%s" stroke-width="2"/><text x="%.1f" y="%.1f" style="fill: %s; font-weight: bold; text-anchor: middle">%s</text></g>`+"\n",
			x, y, svgMarkR, fill, stroke, x, y+5, stroke, esc(string(r)))
	}
}
