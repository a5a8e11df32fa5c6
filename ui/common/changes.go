package common

import (
	"strings"
	"time"

	"leaselab/engine"
)

// Column is one cell of an outbox row that an engine step can change.
type Column uint8

// Columns whose change is highlighted.
const (
	ColStatus Column = iota
	ColPayment
	ColOwner
	ColUntil
	ColClaims
	ColVersion
	ColBy
	colLease // the lease expired (the clock passed LockedUntilUtc)
)

// Changes is what the last engine command changed: the table cells, the workers and the events
// it wrote. The screen highlights them until the next command.
type Changes struct {
	Cells    map[int64]uint8 // row id -> set of columns (bit per column)
	Workers  map[int]bool    // worker index -> its line changed
	NewAfter int             // events with a Seq above this are new
	FirstRow int             // index of the first changed row, -1 when none
	Toggles  map[string]bool // toggles the last command flipped, by engine name
}

// NoChanges is the empty change set.
func NoChanges(f *Frame) Changes {
	c := Changes{FirstRow: -1}
	if f != nil {
		c.NewAfter = f.EventCount
	}
	return c
}

// Has reports whether column col of row id changed.
func (c Changes) Has(id int64, col Column) bool { return c.Cells[id]&(1<<col) != 0 }

// Row reports whether any cell of Row id changed.
func (c Changes) Row(id int64) bool { return c.Cells[id] != 0 }

// Diff compares two frames of the same session. Rows are matched by Id.
func Diff(prev, next *Frame) Changes {
	if prev == nil || next == nil {
		return NoChanges(next)
	}
	c := Changes{Cells: map[int64]uint8{}, Workers: map[int]bool{}, Toggles: map[string]bool{},
		NewAfter: prev.EventCount, FirstRow: -1}
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
		mark := func(col Column, changed bool) {
			if changed {
				set |= 1 << col
			}
		}
		mark(ColStatus, p.Status != r.Status)
		mark(ColPayment, p.PaymentStatus != r.PaymentStatus)
		mark(ColOwner, p.LockedBy != r.LockedBy)
		mark(ColUntil, !p.LockedUntil.Equal(r.LockedUntil))
		mark(ColClaims, p.Attempts != r.Attempts)
		mark(ColVersion, p.LeaseVersion != r.LeaseVersion)
		mark(ColBy, len(prev.Attempts[r.IdempotencyKey]) != len(next.Attempts[r.IdempotencyKey]))
		mark(colLease, Expired(r, next.Now) && !Expired(p, prev.Now))
		if set != 0 {
			c.Cells[r.ID] = set
			if c.FirstRow < 0 {
				c.FirstRow = i
			}
		}
	}
	for _, t := range engine.AllToggleNames() {
		a, _ := prev.Settings.Get(t)
		b, _ := next.Settings.Get(t)
		if a != b {
			c.Toggles[t] = true
		}
	}
	for i, w := range next.Workers {
		if i >= len(prev.Workers) || i >= len(prev.Ledgers) || i >= len(next.Ledgers) {
			continue
		}
		p := prev.Workers[i]
		if p.State != w.State || p.Holding != w.Holding || p.Queue != w.Queue ||
			p.Crashed != w.Crashed || p.Paused != w.Paused || prev.Ledgers[i] != next.Ledgers[i] {
			c.Workers[i] = true
		}
	}
	return c
}

// Expired reports whether r is Processing under a lease the clock has passed.
func Expired(r *engine.Row, now time.Time) bool {
	return r.Status == engine.StatusProcessing && !r.LockedUntil.IsZero() && now.After(r.LockedUntil)
}

// ShortName turns "Worker-A" into "A" for narrow cells.
func ShortName(name string) string {
	if s, ok := strings.CutPrefix(name, "Worker-"); ok && s != "" {
		return s
	}
	return name
}
