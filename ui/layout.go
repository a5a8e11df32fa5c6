package ui

// Screen size limits. Below the minimum the lab shows a "terminal too small" screen; before the
// first WindowSizeMsg (no terminal size known yet) it lays out for the default.
const (
	minWidth      = 80
	minHeight     = 24
	defaultWidth  = 80
	defaultHeight = 24
	// wideWidth and wideHeight switch on the wide layout: ledgers beside the safety checks, each
	// check on a line of its own.
	wideWidth  = 110
	wideHeight = 30
	// ledgersWidth is the wide layout's ledger column; the checks take the rest.
	ledgersWidth = 46
	headerLines  = 3
)

// content is what the layout must make room for.
type content struct {
	rows, workers int
	ledgerLines   func(w int, wide bool) int // lines the ledgers take at width w
	checks        int
	verdict       int             // lines of the verdict (0 until the scenario is done)
	captionLines  func(w int) int // 0 while the explanation is hidden
	captionAuto   bool            // the explanation takes only lines nobody else wants
	helpLines     int
	statusLines   int
}

// layout is the height of every pane for one screen size. Panes stack top to bottom: header,
// table, workers, ledgers and checks (side by side when wide), verdict, explanation, events,
// status line, help.
type layout struct {
	width, height int
	tooSmall      bool
	wide          bool
	ledgersW      int // wide: the ledger column; the checks take width-ledgersW-2

	header, table, workers, ledgers, checks, verdict, caption, events, status, help int
}

// grow raises *h towards upTo with lines from *left.
func grow(left *int, h *int, upTo int) {
	if add := min(*left, max(0, upTo-*h)); add > 0 {
		*h += add
		*left -= add
	}
}

// plan lays the screen out for w×h cells (0×0: not known yet).
func plan(w, h int, c content) layout {
	if w == 0 && h == 0 {
		w, h = defaultWidth, defaultHeight
	}
	l := layout{width: w, height: h, header: headerLines, status: max(1, c.statusLines), help: c.helpLines}
	if w < minWidth || h < minHeight {
		l.tooSmall = true
		return l
	}
	l.wide = w >= wideWidth && h >= wideHeight
	ledgersWant := c.ledgerLines(w, false)
	checksWant := 1 + c.checks
	if l.wide {
		l.ledgersW = ledgersWidth
		ledgersWant = max(c.ledgerLines(ledgersWidth, true), checksWant)
		checksWant = ledgersWant
	}
	captionWant := c.captionLines(w)

	// Everyone's minimum first; then the table and the workers; then the log; then the rest.
	l.table = 2 + min(c.rows, 3)
	l.workers = 1 + min(c.workers, 2)
	l.ledgers, l.checks = min(1, ledgersWant), 1
	l.verdict = c.verdict
	if l.wide {
		l.verdict = max(c.verdict, 1)
	}
	if !c.captionAuto {
		// Asked for with i: the whole explanation, before anything grows.
		l.caption = captionWant
	}
	l.events = 2
	fixed := l.header + l.status + l.help + l.verdict
	left := l.height - fixed - l.table - l.workers - l.events - l.caption - l.rowOfLedgers()
	// Full help or the explanation on a small screen: panes give lines back, the log first,
	// down to a row of the table and one worker.
	give := func(h *int, floor int) {
		if d := min(-left, *h-floor); d > 0 {
			*h -= d
			left += d
		}
	}
	give(&l.events, 0)
	if !l.wide {
		give(&l.checks, 0)
		give(&l.ledgers, 0)
	}
	give(&l.table, 2+min(c.rows, 1))
	give(&l.workers, 1+min(c.workers, 1))
	give(&l.caption, min(2, captionWant))
	give(&l.help, 1)
	if l.events == 1 {
		l.events, left = 0, left+1 // a title with no event under it
	}
	left = max(0, left)
	grow(&left, &l.workers, 1+c.workers)
	if l.wide {
		grow(&left, &l.ledgers, ledgersWant)
		l.checks = l.ledgers
		grow(&left, &l.events, 1+4)
		grow(&left, &l.table, 2+c.rows)
	} else {
		grow(&left, &l.table, 2+c.rows)
		grow(&left, &l.ledgers, 2)
		grow(&left, &l.events, 1+3)
		grow(&left, &l.ledgers, ledgersWant)
		grow(&left, &l.checks, checksWant)
	}
	grow(&left, &l.caption, captionWant)
	if l.caption == 1 {
		l.caption, left = 0, left+1 // a title with no explanation under it
	}
	l.events += left
	return l
}

// rowOfLedgers is the height the ledgers and checks take together.
func (l layout) rowOfLedgers() int {
	if l.wide {
		return max(l.ledgers, l.checks)
	}
	return l.ledgers + l.checks
}
