package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/ui/common"
)

// holder is one LockedBy value and what the database says it holds: the rows it has under a live
// lease, those whose lease has expired (a crashed or stalled process), and the rows it finalized.
type holder struct {
	name      string
	live      []string // keys under a live lease
	until     time.Time
	expired   []string // keys still Processing past their lease
	processed int      // rows Processed with this LockedBy
}

// holdersOf groups rows by LockedBy, sorted by name, as of the wall-clock time now.
func holdersOf(rows []engine.Row, now time.Time) []holder {
	by := map[string]*holder{}
	var names []string
	for i := range rows {
		r := &rows[i]
		if r.LockedBy == "" {
			continue
		}
		h := by[r.LockedBy]
		if h == nil {
			h = &holder{name: r.LockedBy}
			by[r.LockedBy] = h
			names = append(names, r.LockedBy)
		}
		switch {
		case r.Status == engine.StatusProcessed:
			h.processed++
		case common.Expired(r, now):
			h.expired = append(h.expired, r.IdempotencyKey)
		case r.Status == engine.StatusProcessing:
			h.live = append(h.live, r.IdempotencyKey)
			if h.until.IsZero() || r.LockedUntil.Before(h.until) {
				h.until = r.LockedUntil
			}
		}
	}
	slices.Sort(names)
	out := make([]holder, 0, len(names))
	for _, n := range names {
		out = append(out, *by[n])
	}
	return out
}

// rateWindow is how far back the processing rate looks.
const rateWindow = 5 * time.Second

// rateMeter turns successive reads of the Processed count into rows per second.
type rateMeter struct {
	samples []rateSample
	total   int
}

type rateSample struct {
	at   time.Time
	done int
}

// add records a read. A database that was re-seeded (fewer rows done, or another total) starts
// the measure again.
func (r *rateMeter) add(at time.Time, done, total int) {
	if n := len(r.samples); n > 0 && (done < r.samples[n-1].done || total != r.total || at.Before(r.samples[n-1].at)) {
		r.samples = r.samples[:0]
	}
	r.total = total
	r.samples = append(r.samples, rateSample{at, done})
	i := 0
	for i < len(r.samples)-1 && at.Sub(r.samples[i].at) > rateWindow {
		i++
	}
	r.samples = r.samples[i:]
}

// perSecond is the rate over the window; false until the reads span half a second.
func (r rateMeter) perSecond() (float64, bool) {
	if len(r.samples) < 2 {
		return 0, false
	}
	first, last := r.samples[0], r.samples[len(r.samples)-1]
	span := last.at.Sub(first.at)
	if span < rateWindow/10 {
		return 0, false
	}
	return float64(last.done-first.done) / span.Seconds(), true
}

// watchLayout is the height of every pane of the watch.
type watchLayout struct {
	width, height int
	tooSmall      bool
	table         int
	holders       int
	recent        int // the recent happenings: a title and a few lines
	gap           int // blank lines above the status line when the rows leave room
	help          int
	extras        []int // the registered panes, below who holds what
}

// relayout sizes the panes; it runs in Update, so View only renders.
func (m *watchModel) relayout() {
	w, h := m.width, m.height
	if w == 0 && h == 0 {
		w, h = defaultWidth, defaultHeight
	}
	m.help.Width = w
	l := watchLayout{width: w, height: h, help: 1}
	if m.showHelp {
		l.help = len(strings.Split(m.help.FullHelpView(m.helpKeys().FullHelp()), "\n"))
	}
	rows := 0
	if m.frame != nil {
		rows = len(m.frame.Rows)
	}
	if w < minWidth || h < minHeight {
		l.tooSmall = true
	} else {
		left := h - headerLines - 1 - l.help // the status line
		l.holders = 1 + min(max(1, len(m.holders)), 8)
		l.holders = max(2, min(l.holders, left-5)) // the table keeps a heading and three rows
		l.recent = max(0, min(1+recentLines, left-l.holders-5))
		l.table = min(left-l.holders-l.recent, 2+max(rows, 1))
		l.gap = left - l.holders - l.recent - l.table
		l.extras = make([]int, len(m.panes.ps))
		for i, want := range m.panes.wants(m.scene(), w) {
			l.extras[i] = min(want, l.gap) // the registered panes take the spare lines
			l.gap -= l.extras[i]
		}
	}
	m.layout = l
	m.outbox.SetSize(w, max(0, l.table-2), l.table > 0, rows)
	m.panes = m.panes.setSizes(w, l.extras)
}

// helpKeys are the watch's keys and its panes'.
func (m watchModel) helpKeys() watchKeys { return watchKeys{m.keys, m.outbox.Keys, m.panes.ps} }

// View renders the last read; it does no I/O.
func (m watchModel) View() string {
	if m.quitting {
		return ""
	}
	l := m.layout
	if l.tooSmall {
		return tooSmallScreen(l.width, l.height)
	}
	lines := make([]string, 0, l.height)
	lines = append(lines, m.headerView()...)
	lines = append(lines, paneLines(m.outbox.View(m.scene()), l.width, m.outbox.Height())...)
	lines = append(lines, m.holdersView(l.width, l.holders)...)
	lines = append(lines, m.panes.view(m.scene(), l.width)...)
	lines = append(lines, make([]string, l.gap)...)
	lines = append(lines, m.recentView(l.width, l.recent)...)
	lines = append(lines, m.statusView(l.width))
	if m.showHelp {
		lines = append(lines, common.Box(strings.Split(m.help.FullHelpView(m.helpKeys().FullHelp()), "\n"), l.width, l.help)...)
	} else {
		lines = append(lines, m.help.ShortHelpView(m.helpKeys().ShortHelp()))
	}
	return strings.Join(common.Box(lines, l.width, l.height), "\n")
}

// headerView is three lines: what this is and the file; the counts; the rate and the clock.
// Narrow, the less telling items are left out rather than cut.
func (m watchModel) headerView() []string {
	st, w, c := &m.styles, m.layout.width, m.counts
	line1 := st.Title.Render("LEASELAB") + "  " + st.Free.Render(" WATCH (read-only) ")
	if room := w - common.Width(line1) - 5; room >= 12 && m.cfg.Path != "" {
		right := "db " + common.CutLeft(m.cfg.Path, room)
		line1 = common.Pad(line1, w-common.Width(right)) + st.Subtle.Render(right)
	}
	if m.frame == nil {
		return []string{line1, st.Subtle.Render("no read yet"), ""}
	}
	outbox := fmt.Sprintf("outbox %s %d · %s %d · %s %d of %d", st.Pending.Render("Pending"), c.OutboxPending,
		st.Processing.Render("Processing"), c.OutboxProcessing, st.Processed.Render("Processed"), c.OutboxProcessed, c.Messages)
	payments := fmt.Sprintf("payments %s %d · %s %d · Pending %d", st.Paid.Render("Paid"), c.PaymentsPaid,
		st.Failed.Render("Failed"), c.PaymentsFailed, c.PaymentsPending)
	rate := "rate – (measuring)"
	if r, ok := m.rate.perSecond(); ok {
		rate = fmt.Sprintf("rate %s rows/s (last %s)", st.Title.Render(strings.TrimSuffix(fmt.Sprintf("%.1f", r), ".0")), rateWindow)
	}
	poll := "polling every " + m.cfg.Interval.String()
	if m.paused {
		poll = st.Warn.Render("‖ polling PAUSED") + " (" + common.KeyName(m.keys.Pause) + ")"
	}
	return []string{
		line1,
		fitJoin([]string{outbox, payments}, "   ", w),
		fitJoin([]string{rate, poll, "wall clock " + st.Title.Render(engine.FormatClock(m.frame.Now)), fmt.Sprintf("%d %s", m.polls, common.Plural(m.polls, "read"))}, "  ", w),
	}
}

// fitJoin joins items with sep, leaving out those (after the first) that would not fit in w.
func fitJoin(items []string, sep string, w int) string {
	line := items[0]
	for _, it := range items[1:] {
		if common.Width(line)+common.Width(sep)+common.Width(it) <= w {
			line += sep + it
		}
	}
	return line
}

// holdersView is who holds what, by LockedBy value, in exactly h lines.
func (m watchModel) holdersView(w, h int) []string {
	if h <= 0 {
		return nil
	}
	st := &m.styles
	title := fmt.Sprintf("Who holds what: %d LockedBy %s (each a worker process)", len(m.holders), common.Plural(len(m.holders), "value"))
	lines := []string{st.Section.Render(common.Rule(title, w))}
	if len(m.holders) == 0 {
		lines = append(lines, st.Subtle.Render("nobody has claimed a row yet: start leaselab worker --db FILE --name W in another terminal"))
		return common.Box(lines, w, h)
	}
	nameW := 0
	for _, hd := range m.holders {
		nameW = max(nameW, common.Width(hd.name))
	}
	show := h - 1
	for i, hd := range m.holders {
		if i == show-1 && len(m.holders) > show {
			lines = append(lines, st.Subtle.Render(fmt.Sprintf("… and %d more", len(m.holders)-i)))
			break
		}
		lines = append(lines, m.holderLine(i, hd, nameW))
	}
	return common.Box(lines, w, h)
}

// holderLine is one LockedBy value: what it holds under a live lease, what it left expired, and
// how many rows it finalized.
func (m watchModel) holderLine(i int, hd holder, nameW int) string {
	st := &m.styles
	parts := []string{}
	switch {
	case len(hd.live) > 0:
		parts = append(parts, fmt.Sprintf("holds %s (lease %s left)", strings.Join(hd.live, " "),
			common.ShortDuration(hd.until.Sub(m.frame.Now))))
	default:
		parts = append(parts, st.Subtle.Render("holds nothing"))
	}
	if len(hd.expired) > 0 {
		parts = append(parts, st.Expired.Render("EXPIRED")+" "+strings.Join(hd.expired, " ")+" (its process crashed or stalled; another may reclaim)")
	}
	parts = append(parts, fmt.Sprintf("processed %d", hd.processed))
	return "  " + st.Worker(i).Render(common.Pad(hd.name, nameW)) + "  " + strings.Join(parts, " · ")
}

// statusView is the status line.
func (m watchModel) statusView(w int) string {
	st, line := &m.styles, m.status.Plain()
	switch m.status.Level {
	case common.LevelError:
		line = st.Error.Render(line)
	case common.LevelWarn:
		line = st.Warn.Render(line)
	}
	return common.Cut(line, w)
}
