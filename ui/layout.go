package ui

import (
	"leaselab/ui/caption"
	"leaselab/ui/checks"
	"leaselab/ui/ledgers"
	"leaselab/ui/verdict"
	"slices"
)

// Screen size limits. Below the minimum the lab shows a "terminal too small" screen; before the
// first WindowSizeMsg (no terminal size known yet) it lays out for the default.
const (
	minWidth      = 80
	minHeight     = 24
	defaultWidth  = 80
	defaultHeight = 24
	// wideWidth and wideHeight switch on the wide layout: every pane under a title, checks with
	// their details, the ledgers in a column of their own.
	wideWidth  = 110
	wideHeight = 30
	// ledgersWidth is the wide layout's ledger column; the checks take the rest.
	ledgersWidth = 48
	// narrowChecksWidth is the narrow layout's checks column: a glyph and the longest check name
	// ("crashed owner's lease reclaimed after expiry"); the ledgers take the rest.
	narrowChecksWidth = 46
	headerLines       = 3
	// tableFloor is how many outbox rows the narrow layout keeps before anything optional: the
	// six payments of the workshop.
	tableFloor = 6
)

// content is what the layout must make room for.
type content struct {
	rows, workers int
	ledgerLines   func(w int, wide bool) int // body lines the ledgers take at width w
	checkLines    func(w int, wide bool) int // body lines the checks take, details and all
	checkFloor    int                        // one line per check of the verdict, one for the others
	done          bool
	verdictLines  func(w int) int // the verdict (done) or what is expected (not yet)
	captionLines  func(w int) int // 0 while the explanation is hidden
	captionAuto   bool            // the explanation takes only lines nobody else wants
	helpLines     int
	helpOpen      bool   // the ? screen: it covers the panes
	statusLines   int    // the status note and the history's timeline above it
	noteLines     int    // the status note alone: it comes before the panes
	extras        []int  // the lines each registered pane would take (panes.go)
	pinned        []bool // those the narrow layout serves before its optional lines (pane.go)
}

// layout is the height of every pane for one screen size. Panes stack top to bottom: header,
// table, workers, ledgers beside the checks, verdict, explanation, events, status line, help.
// A pane's title is a line of its own that a short screen leaves out before anything it names.
type layout struct {
	width, height int
	tooSmall      bool
	wide          bool
	ledgersW      int // the ledger column; the checks take width-ledgersW-2

	header               int
	tableTitle           bool
	tableRows            int // outbox rows under the heading
	workersTitle         bool
	workerLines          int
	rowTitle             bool // the titles of the ledgers and the checks
	rowLines             int  // lines of the ledgers and the checks, side by side
	verdict, caption     int
	events, status, help int
	note                 int   // the lines of the status note it was planned for (noteLines)
	extras               []int // the registered panes, below the events
}

// table is the outbox pane's height: its title, the heading and the rows.
func (l layout) table() int {
	if l.tableRows == 0 && !l.tableTitle {
		return 0
	}
	return b2i(l.tableTitle) + 1 + l.tableRows
}

// diagramStatus is the status line's height under the diagram: the note, not the history's
// timeline (the diagram is a timeline of its own), so that its lanes keep their lines.
func (l layout) diagramStatus(noteLines int) int { return max(1, min(l.status, noteLines)) }

// workers is the workers pane's height.
func (l layout) workers() int { return b2i(l.workersTitle) + l.workerLines }

// row is the height of the ledgers and checks side by side.
func (l layout) row() int { return b2i(l.rowTitle) + l.rowLines }

// checksW is the width of the checks column.
func (l layout) checksW() int { return l.width - l.ledgersW - 2 }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// budget hands out the lines of a screen, first asked first served.
type budget struct{ left int }

// take raises *p by up to n lines.
func (b *budget) take(p *int, n int) {
	if n = min(n, b.left); n > 0 {
		*p += n
		b.left -= n
	}
}

// upTo raises *p towards n.
func (b *budget) upTo(p *int, n int) { b.take(p, n-*p) }

// all raises *p by n lines, or not at all.
func (b *budget) all(p *int, n int) {
	if n > 0 && n <= b.left {
		b.take(p, n)
	}
}

// flag sets *f when a line is left for it.
func (b *budget) flag(f *bool) {
	if !*f && b.left > 0 {
		*f = true
		b.left--
	}
}

// plan lays the screen out for w×h cells (0×0: not known yet).
func plan(w, h int, c content) layout {
	if w == 0 && h == 0 {
		w, h = defaultWidth, defaultHeight
	}
	l := layout{width: w, height: h, note: c.noteLines}
	if w < minWidth || h < minHeight {
		l.tooSmall, l.header, l.status = true, headerLines, 1
		return l
	}
	l.wide = w >= wideWidth && h >= wideHeight
	l.ledgersW = w - narrowChecksWidth - 2
	if l.wide {
		l.ledgersW = ledgersWidth
	}
	cw := l.checksW()
	b := &budget{left: h}
	b.take(&l.header, headerLines)
	b.take(&l.status, 1)
	if c.helpOpen {
		return l.helpScreen(b, c)
	}
	// The status note whole comes first, then an explanation asked for with i: the rest gives
	// way, down to the table's heading and first row and the selected worker.
	keep := 1 + min(c.rows, 1) + min(c.workers, 1)
	b.take(&l.help, 1)
	b.upTo(&l.status, min(c.noteLines, b.left-keep))
	if !c.captionAuto {
		b.take(&l.caption, min(c.captionLines(w), b.left-keep))
	}
	heading := 0
	b.take(&heading, 1) // the table's heading: its own line, always
	b.take(&l.tableRows, min(c.rows, 1))
	b.take(&l.workerLines, min(c.workers, 1))
	verdict := c.verdictLines(w)
	l.extras = make([]int, len(c.extras))
	if l.wide {
		l.wideRest(b, c, verdict, cw)
	} else {
		l.narrowRest(b, c, verdict, cw)
	}
	if c.captionAuto {
		if want := c.captionLines(w); want >= 2 {
			b.all(&l.caption, want)
		}
	}
	for i, want := range c.extras {
		b.upTo(&l.extras[i], want) // the registered panes: what the built-in ones left
	}
	if c.rows > l.tableRows && !l.tableTitle {
		// Rows left out: the title says which are on screen, in the place of one of them, or of
		// a line of the checks (whose pane then sums up what it leaves out).
		switch {
		case l.tableRows > 1:
			l.tableRows--
			l.tableTitle = true
		case l.rowLines > 1:
			l.rowLines--
			l.tableTitle = true
		}
	}
	if l.events == 0 && b.left == 1 {
		return l // a title with no event under it says nothing
	}
	b.take(&l.events, b.left)
	return l
}

// helpScreen lays out the ? screen, which covers the panes: the status note whole (an open
// question stays on screen), then every key; the header gives way before a key does.
func (l layout) helpScreen(b *budget, c content) layout {
	b.upTo(&l.status, c.noteLines)
	if over := c.helpLines - b.left; over > 0 {
		give := min(over, l.header)
		l.header -= give
		b.left += give
	}
	b.take(&l.help, b.left) // the status line at the bottom, where it always is
	return l
}

// wideRest hands out the wide layout's lines once the table's heading, its first row and the
// selected worker have theirs: every pane under a title, the checks with their details.
func (l *layout) wideRest(b *budget, c content, verdict, cw int) {
	b.flag(&l.tableTitle)
	b.flag(&l.workersTitle)
	b.flag(&l.rowTitle)
	b.take(&l.rowLines, c.checkFloor)
	if c.done {
		b.take(&l.verdict, verdict)
	}
	b.upTo(&l.tableRows, min(c.rows, 3))
	b.upTo(&l.workerLines, min(c.workers, 2))
	b.take(&l.events, 2)
	b.upTo(&l.rowLines, max(c.ledgerLines(l.ledgersW, true), c.checkLines(cw, true)))
	b.upTo(&l.workerLines, c.workers)
	b.upTo(&l.status, c.statusLines)
	if !c.done {
		b.all(&l.verdict, verdict)
	}
	b.upTo(&l.events, 1+4)
	b.upTo(&l.tableRows, c.rows)
}

// narrowRest hands out the narrow layout's lines once the table's heading, its first row and
// the selected worker have theirs: what a step of the workshop points at first, titles last.
func (l *layout) narrowRest(b *budget, c content, verdict, cw int) {
	b.take(&l.rowLines, c.checkFloor)
	if c.done {
		b.take(&l.verdict, verdict)
	}
	pinned := slices.Contains(c.pinned, true)
	if pinned {
		// A pinned pane's line before the table's other rows (the table says which it shows).
		for i, want := range c.extras {
			if i < len(c.pinned) && c.pinned[i] {
				b.upTo(&l.extras[i], want)
			}
		}
	}
	b.upTo(&l.workerLines, min(c.workers, 2)) // two workers: the workshop's, or one and "+N more"
	b.upTo(&l.tableRows, min(c.rows, tableFloor))
	if pinned {
		b.upTo(&l.workerLines, c.workers) // every worker before the titles
	}
	b.flag(&l.rowTitle)
	if c.rows > l.tableRows {
		b.flag(&l.tableTitle) // it says which rows are on screen
	}
	b.upTo(&l.workerLines, c.workers)
	b.upTo(&l.status, c.statusLines)
	if !c.done {
		b.all(&l.verdict, verdict)
	}
	b.upTo(&l.rowLines, max(c.ledgerLines(l.ledgersW, false), c.checkLines(cw, false)))
	if b.left >= 3 {
		b.take(&l.events, 3)
	}
	b.flag(&l.workersTitle)
	b.flag(&l.tableTitle)
	b.upTo(&l.tableRows, c.rows)
	b.upTo(&l.events, 1+3)
}

// relayout recomputes the panes' sizes after a resize, a new frame or a toggled pane. It runs
// in Update, so View only renders.
func (m *Model) relayout() {
	w := m.width
	if w == 0 && m.height == 0 {
		w = defaultWidth
	}
	helpLines := 1
	if m.showHelp {
		helpLines = len(m.help().fullHelpLines(w))
	}
	c := content{
		ledgerLines:  func(w int, wide bool) int { return len(ledgers.Pane{Scene: m.scene()}.Body(w)) },
		checkLines:   func(w int, wide bool) int { return checks.Pane{Scene: m.scene()}.Want(w, wide) },
		verdictLines: func(w int) int { return len(verdict.Pane{Scene: m.scene()}.Lines(w)) },
		captionLines: func(w int) int { return len(m.caption.Lines(m.scene(), w)) },
		helpLines:    helpLines,
		helpOpen:     m.showHelp,
		captionAuto:  m.caption.Mode == caption.Auto,
		statusLines:  m.statusLine().Lines(w),
		noteLines:    m.statusLine().NoteLines(w),
		extras:       m.panes.wants(m.scene(), w),
		pinned:       m.panes.pinned(m.scene()),
	}
	if f := m.frame; f != nil {
		c.rows, c.workers = len(f.Rows), len(f.Workers)
		c.checkFloor = checks.Floor(f)
		c.done = f.Done
	}
	m.layout = plan(m.width, m.height, c)
	scrolled := m.outbox.Keys.Down.Enabled()
	m.outbox.SetSize(m.layout.width, m.layout.tableRows, m.layout.tableTitle, c.rows)
	if m.outbox.Keys.Down.Enabled() != scrolled && m.showHelp {
		// The ? screen lists the scroll keys only when they work: its height changed.
		c.helpLines = len(m.help().fullHelpLines(w))
		m.layout = plan(m.width, m.height, c)
		m.outbox.SetSize(m.layout.width, m.layout.tableRows, m.layout.tableTitle, c.rows)
	}
	m.panes = m.panes.setSizes(m.layout.width, m.layout.extras)
	l := m.layout
	m.diagram.SetSize(l.width, max(0, l.height-l.header-l.diagramStatus(c.noteLines)-l.help))
	m.sql.SetSize(l.width, l.height)
}
