package ui

import (
	"fmt"
	"time"

	"leaselab/engine"
	"leaselab/ui/common"
)

// The watch sees only what successive reads of the database show. What happened between two
// reads is told from the difference: a row claimed, a lease that ran out, a row reclaimed under
// a new lease version, a row finalized. The moments that teach (an expiry, a reclaim) stay on
// screen for a while; the routine ones briefly.

const (
	// notableFor is how long an expiry or a reclaim stays among the recent happenings.
	notableFor = 8 * time.Second
	// routineFor is how long a claim or a finalize stays.
	routineFor = 3 * time.Second
	// recentLines is how many happenings the watch shows at once.
	recentLines = 3
)

// happening is one thing successive reads showed, at the wall-clock time of the read.
type happening struct {
	at      time.Time
	text    string
	notable bool
}

// happenings compares two reads of the outbox (prev at prevAt, next at at), row by row.
func happenings(prev, next []engine.Row, prevAt, at time.Time) []happening {
	old := make(map[int64]*engine.Row, len(prev))
	for i := range prev {
		old[prev[i].ID] = &prev[i]
	}
	var out []happening
	add := func(notable bool, format string, args ...any) {
		out = append(out, happening{at: at, text: fmt.Sprintf(format, args...), notable: notable})
	}
	for i := range next {
		r := &next[i]
		p, ok := old[r.ID]
		if !ok {
			continue
		}
		key := r.IdempotencyKey
		reclaimed := p.Status == engine.StatusProcessing && r.LeaseVersion > p.LeaseVersion
		switch {
		case reclaimed && r.Status == engine.StatusProcessing:
			add(true, "%s lease ended (%s held it) → reclaimed by %s, v%d", key, p.LockedBy, r.LockedBy, r.LeaseVersion)
		case reclaimed && r.Status == engine.StatusProcessed:
			add(true, "%s lease ended (%s held it) → reclaimed and processed by %s, v%d (%s)", key, p.LockedBy, r.LockedBy,
				r.LeaseVersion, r.PaymentStatus)
		case p.Status == engine.StatusProcessing && r.Status == engine.StatusProcessed:
			add(false, "%s processed by %s (%s)", key, r.LockedBy, r.PaymentStatus)
		case p.Status == engine.StatusPending && r.Status == engine.StatusProcessing:
			add(false, "%s claimed by %s, v%d, lease until %s", key, r.LockedBy, r.LeaseVersion, engine.FormatClock(r.LockedUntil))
		case p.Status == engine.StatusPending && r.Status == engine.StatusProcessed:
			add(false, "%s claimed and processed by %s (%s)", key, r.LockedBy, r.PaymentStatus)
		case r.LeaseVersion == p.LeaseVersion && common.Expired(r, at) && !common.Expired(p, prevAt):
			add(true, "%s lease ended (%s held it, did not finish) → EXPIRED, free to reclaim", key, r.LockedBy)
		}
	}
	return out
}

// recentLog keeps the happenings of the last few seconds.
type recentLog struct{ items []happening }

// add records what a read showed, and forgets what is older than it should stay, as of at.
func (l *recentLog) add(at time.Time, hs []happening) {
	l.items = append(l.items, hs...)
	kept := l.items[:0]
	for _, h := range l.items {
		stay := routineFor
		if h.notable {
			stay = notableFor
		}
		if at.Sub(h.at) < stay {
			kept = append(kept, h)
		}
	}
	l.items = kept
}

// shown is at most n happenings, newest last: the routine ones give way to the notable ones.
func (l recentLog) shown(n int) []happening {
	items := l.items
	for len(items) > n {
		drop := 0 // the oldest routine happening, or else the oldest one
		for i, h := range items {
			if !h.notable {
				drop = i
				break
			}
		}
		items = append(items[:drop:drop], items[drop+1:]...)
	}
	return items
}

// recentView is the recent happenings under a title, in exactly h lines.
func (m watchModel) recentView(w, h int) []string {
	if h <= 0 {
		return nil
	}
	st := &m.styles
	lines := []string{st.Section.Render(common.Rule("Just now: what successive reads of the database show, newest last", w))}
	shown := m.recent.shown(h - 1)
	if len(shown) == 0 {
		lines = append(lines, st.Subtle.Render("  nothing has changed in the last few seconds"))
	}
	for _, hp := range shown {
		text := hp.text
		if hp.notable {
			text = st.Warn.Render(text)
		}
		lines = append(lines, "  "+engine.FormatClock(hp.at)+" "+text)
	}
	return common.Box(lines, w, h)
}

// workSpan is the rows being worked on: the first and last Processing row (live or expired),
// or the next Pending row when none is; -1 when every row is done.
func workSpan(rows []engine.Row) (lo, hi int) {
	lo, hi = -1, -1
	for i := range rows {
		if rows[i].Status == engine.StatusProcessing {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
	}
	if lo >= 0 {
		return lo, hi
	}
	for i := range rows {
		if rows[i].Status == engine.StatusPending {
			return i, i
		}
	}
	return -1, -1
}
