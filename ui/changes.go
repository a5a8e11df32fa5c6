package ui

import (
	"strings"
	"time"

	"leaselab/engine"
)

// column is one cell of an outbox row that an engine step can change.
type column uint8

// Columns whose change is highlighted.
const (
	colStatus column = iota
	colPayment
	colOwner
	colUntil
	colClaims
	colVersion
	colBy
	colLease // the lease expired (the clock passed LockedUntilUtc)
)

// changes is what the last engine command changed: the table cells, the workers and the events
// it wrote. The screen highlights them until the next command.
type changes struct {
	cells    map[int64]uint8 // row id -> set of columns (bit per column)
	workers  map[int]bool    // worker index -> its line changed
	newAfter int             // events with a Seq above this are new
	firstRow int             // index of the first changed row, -1 when none
	toggles  map[string]bool // toggles the last command flipped, by engine name
}

// noChanges is the empty change set.
func noChanges(f *frame) changes {
	c := changes{firstRow: -1}
	if f != nil {
		c.newAfter = f.EventCount
	}
	return c
}

// has reports whether column col of row id changed.
func (c changes) has(id int64, col column) bool { return c.cells[id]&(1<<col) != 0 }

// row reports whether any cell of row id changed.
func (c changes) row(id int64) bool { return c.cells[id] != 0 }

// diff compares two frames of the same session. Rows are matched by Id.
func diff(prev, next *frame) changes {
	if prev == nil || next == nil {
		return noChanges(next)
	}
	c := changes{cells: map[int64]uint8{}, workers: map[int]bool{}, toggles: map[string]bool{},
		newAfter: prev.EventCount, firstRow: -1}
	old := make(map[int64]*engine.Row, len(prev.Rows))
	for i := range prev.Rows {
		old[prev.Rows[i].ID] = &prev.Rows[i]
	}
	for i := range next.Rows {
		r := &next.Rows[i]
		p, ok := old[r.ID]
		if !ok {
			continue
		}
		var set uint8
		mark := func(col column, changed bool) {
			if changed {
				set |= 1 << col
			}
		}
		mark(colStatus, p.Status != r.Status)
		mark(colPayment, p.PaymentStatus != r.PaymentStatus)
		mark(colOwner, p.LockedBy != r.LockedBy)
		mark(colUntil, !p.LockedUntil.Equal(r.LockedUntil))
		mark(colClaims, p.Attempts != r.Attempts)
		mark(colVersion, p.LeaseVersion != r.LeaseVersion)
		mark(colBy, len(prev.Attempts[r.IdempotencyKey]) != len(next.Attempts[r.IdempotencyKey]))
		mark(colLease, expired(r, next.Now) && !expired(p, prev.Now))
		if set != 0 {
			c.cells[r.ID] = set
			if c.firstRow < 0 {
				c.firstRow = i
			}
		}
	}
	for _, t := range engine.AllToggleNames() {
		a, _ := prev.Settings.Get(t)
		b, _ := next.Settings.Get(t)
		if a != b {
			c.toggles[t] = true
		}
	}
	for i, w := range next.Workers {
		if i >= len(prev.Workers) || i >= len(prev.Ledgers) || i >= len(next.Ledgers) {
			continue
		}
		p := prev.Workers[i]
		if p.State != w.State || p.Holding != w.Holding || p.Queue != w.Queue ||
			p.Crashed != w.Crashed || p.Paused != w.Paused || prev.Ledgers[i] != next.Ledgers[i] {
			c.workers[i] = true
		}
	}
	return c
}

// expired reports whether r is Processing under a lease the clock has passed.
func expired(r *engine.Row, now time.Time) bool {
	return r.Status == engine.StatusProcessing && !r.LockedUntil.IsZero() && now.After(r.LockedUntil)
}

// shortName turns "Worker-A" into "A" for narrow cells.
func shortName(name string) string {
	if s, ok := strings.CutPrefix(name, "Worker-"); ok && s != "" {
		return s
	}
	return name
}
