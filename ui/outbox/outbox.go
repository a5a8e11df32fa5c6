// Package outbox is the outbox pane: the table of OutboxMessages as the database holds them,
// shared by the lab and the watch.
package outbox

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Pane is the outbox table: one line per row of OutboxMessages, as the last frame read it.
// Only the rows that fit are rendered; the rest scroll, on the pane's own keys. The lab and the
// watch show the same pane.
type Pane struct {
	Keys   common.ScrollKeys // on while the table has more rows than it shows
	width  int
	shown  int  // outbox rows on screen, under the heading
	title  bool // a title line above the heading
	rows   int  // rows in the frame
	Offset int  // first visible row
	// scrolled is set when the user moved the view with a scroll key: the watch then stops
	// following the work until the user scrolls it back into view.
	Scrolled bool
}

// New returns the pane, scrolled to its first row.
func New() Pane { return Pane{Keys: common.DefaultScrollKeys()} }

// SetSize sets the pane's width, the rows it shows under its heading (and a title line above
// it, when title) and the number of rows it holds, keeping the offset in range; its scroll keys
// are on when not every row fits.
func (p *Pane) SetSize(w, shown int, title bool, rows int) {
	p.width, p.shown, p.title, p.rows = w, shown, title, rows
	p.clamp()
	p.Keys.SetEnabled(rows > p.Visible())
}

// Update takes a scroll key. ok is false for any other key, and for a scroll key that is off
// now (every row fits): the shell then says why, or nothing.
func (p Pane) Update(msg tea.Msg) (_ Pane, _ tea.Cmd, ok bool) {
	k, isKey := msg.(tea.KeyMsg)
	if !isKey {
		return p, nil, false
	}
	to, ok := p.Keys.Scroll(k, p.Offset, p.rows, p.Visible())
	if !ok {
		return p, nil, false
	}
	p.Offset, p.Scrolled = to, true
	p.clamp()
	return p, nil, true
}

// ShortHelp is the pane's keys for a footer (help.KeyMap).
func (p Pane) ShortHelp() []key.Binding { return p.Keys.ShortHelp() }

// FullHelp is the pane's keys for a ? screen (help.KeyMap).
func (p Pane) FullHelp() [][]key.Binding { return p.Keys.FullHelp() }

// Height is the pane's height: the title, the heading and the rows.
func (p Pane) Height() int {
	if p.shown == 0 && !p.title {
		return 0
	}
	if p.title {
		return 2 + p.shown
	}
	return 1 + p.shown
}

// Visible is the number of rows the pane shows.
func (p Pane) Visible() int { return max(0, p.shown) }

func (p *Pane) clamp() {
	p.Offset = max(0, min(p.Offset, p.rows-p.Visible()))
}

// AtEdge says why a scroll key did not move the table: it shows the first or the last rows.
func (p Pane) AtEdge() string {
	end := "first"
	if p.Offset > 0 {
		end = "last"
	}
	return fmt.Sprintf("rows %d–%d of %d on screen: the %s rows, as far as the table scrolls", p.Offset+1, p.Offset+p.Visible(), p.rows, end)
}

// Follow scrolls row i into view (i < 0: no change), so that a step's change is on screen.
func (p *Pane) Follow(i int) {
	if i < 0 || p.Visible() == 0 {
		return
	}
	if i < p.Offset || i >= p.Offset+p.Visible() {
		p.Offset = i - p.Visible()/3
		p.clamp()
	}
}

// FollowSpan scrolls rows lo…hi into view when they are not, with a third of the spare rows
// above them; a span taller than the pane starts at lo. It leaves a view the user scrolled.
func (p *Pane) FollowSpan(lo, hi int) {
	v := p.Visible()
	if lo < 0 || v == 0 {
		return
	}
	if lo >= p.Offset && hi < p.Offset+v {
		p.Scrolled = false // the work is in view: follow it again
		return
	}
	if p.Scrolled {
		return
	}
	p.Offset = lo
	if spare := v - (hi - lo + 1); spare > 0 {
		p.Offset = lo - spare/3
	}
	p.clamp()
}

// View renders the title, the heading and the visible rows of s's frame.
func (p Pane) View(s common.Scene) string {
	return strings.Join(p.lines(s.Frame, s.Changes, s.Styles), "\n")
}

// lines are the pane's lines, exactly its height.
func (p Pane) lines(f *common.Frame, ch common.Changes, st *common.Styles) []string {
	w, h := p.width, p.Height()
	if h <= 0 {
		return nil
	}
	if f == nil {
		return common.Box([]string{st.Section.Render(common.Rule("Outbox", w))}, w, h)
	}
	n := len(f.Rows)
	title := fmt.Sprintf("Outbox: %d %s of OutboxMessages, as the database holds them", n, common.Plural(n, "row"))
	if v := p.Visible(); n > v && v > 0 {
		k := p.Keys
		title = fmt.Sprintf("Outbox: rows %d–%d of %d (%s scroll)", p.Offset+1, min(n, p.Offset+v), n, common.KeyNames(k.Up, k.Down, k.PageUp, k.PageDown))
	}
	lines := make([]string, 0, h)
	if p.title {
		lines = append(lines, st.Section.Render(common.Rule(title, w)))
	}
	cols := columns(w, f.Rows, f.Watch, !f.Watch && usesBackoff(f))
	var head strings.Builder
	head.WriteString("  ")
	for i, c := range cols {
		if i > 0 {
			head.WriteByte(' ')
		}
		head.WriteString(common.PadPlain(c.title, c.w))
	}
	lines = append(lines, st.Head.Render(strings.TrimRight(head.String(), " ")))
	idx := f.WorkerIndex()
	end := min(n, p.Offset+p.Visible())
	for i := p.Offset; i < end; i++ {
		lines = append(lines, p.row(f, &f.Rows[i], cols, idx, ch, st))
	}
	return common.Box(lines, w, h)
}

// row renders one outbox row.
func (p Pane) row(f *common.Frame, r *engine.Row, cols []colSpec, idx map[string]int, ch common.Changes, st *common.Styles) string {
	var b strings.Builder
	if ch.Row(r.ID) {
		b.WriteString("• ")
	} else {
		b.WriteString("  ")
	}
	attempts := f.Attempts[r.IdempotencyKey]
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		var text string
		style := st.Info
		styled := false
		changed := false
		switch c.id {
		case cID:
			text = strconv.FormatInt(r.ID, 10)
		case cKey:
			text = r.IdempotencyKey
			if len(attempts) > 1 {
				style, styled = st.Duplicate, true
			}
		case cStatus:
			text, changed = r.Status, ch.Has(r.ID, common.ColStatus)
			style, styled = statusStyle(st, r.Status), r.Status != engine.StatusPending
		case cPayment:
			text, changed = r.PaymentStatus, ch.Has(r.ID, common.ColPayment)
			switch r.PaymentStatus {
			case engine.PaymentPaid:
				style, styled = st.Paid, true
			case engine.PaymentFailed:
				style, styled = st.Failed, true
			}
		case cOwner:
			text, changed = common.OrDash(r.LockedBy), ch.Has(r.ID, common.ColOwner)
			if wi, ok := idx[r.LockedBy]; ok {
				style, styled = st.Worker(wi), true
			}
		case cUntil:
			text, changed = engine.FormatClock(r.LockedUntil), ch.Has(r.ID, common.ColUntil)
		case cNext:
			text = engine.FormatClock(r.NextAttempt)
		case cLease:
			b.WriteString(leaseCell(f, r, c.w, st))
			continue
		case cClaims:
			text, changed = strconv.FormatInt(r.Attempts, 10), ch.Has(r.ID, common.ColClaims)
		case cVersion:
			text, changed = strconv.FormatInt(r.LeaseVersion, 10), ch.Has(r.ID, common.ColVersion)
		case cBy:
			again := f.Summary != nil && slices.Contains(f.Summary.ReprocessedKeys, r.IdempotencyKey)
			b.WriteString(byCell(attempts, idx, ch.Has(r.ID, common.ColBy), again, st))
			continue
		case cDone: // the last column: not padded
			done := engine.FormatClock(r.ProcessedAt)
			if c.w < len(done) && !r.ProcessedAt.IsZero() {
				done = r.ProcessedAt.UTC().Format("15:04:05") // narrow: to the second
			}
			if ch.Has(r.ID, common.ColStatus) && !r.ProcessedAt.IsZero() {
				done = st.Changed.Render(done)
			}
			b.WriteString(done)
			continue
		}
		cell := common.PadPlain(text, c.w)
		switch {
		case changed:
			// Highlight the text only, so that the row keeps its columns.
			b.WriteString(st.Changed.Render(strings.TrimRight(cell, " ")))
			b.WriteString(common.Spaces(len(cell) - len(strings.TrimRight(cell, " "))))
		case styled:
			b.WriteString(style.Render(cell))
		default:
			b.WriteString(cell)
		}
	}
	return b.String()
}
