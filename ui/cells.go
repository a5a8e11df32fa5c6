package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"leaselab/engine"
)

// colID names a table column.
type colID int

// Table columns.
const (
	cID colID = iota
	cKey
	cStatus
	cPayment
	cOwner
	cUntil
	cLease
	cClaims
	cVersion
	cBy
	cDone // ProcessedAtUtc, where the watch has no ledger for "Processed by"
)

// colSpec is one column: what it shows, its heading and its width.
type colSpec struct {
	id    colID
	title string
	w     int
}

// barWidth is the width of the lease bar, by table width.
func barWidth(w int) int {
	if w >= 110 {
		return 10
	}
	return 5
}

// columns picks the columns that fit in w cells, sized for the rows they show. "Processed by"
// takes what is left; the watch, which has no ledger, shows ProcessedAtUtc there instead.
func columns(w int, rows []engine.Row, watch bool) []colSpec {
	idW, keyW, ownerW := 2, 3, 8
	for i := range rows {
		r := &rows[i]
		idW = max(idW, digits(r.ID))
		keyW = max(keyW, len(r.IdempotencyKey))
		ownerW = max(ownerW, len(r.LockedBy))
	}
	keyW, ownerW = min(keyW, 16), min(ownerW, 16)
	wide := w >= 100
	cols := []colSpec{{cID, "Id", idW}, {cKey, "Key", keyW}, {cStatus, "Status", 10}}
	if wide {
		cols = append(cols, colSpec{cPayment, "Payment", 7})
	}
	cols = append(cols,
		colSpec{cOwner, "LockedBy", ownerW}, colSpec{cUntil, "LockedUntilUtc", 14},
		colSpec{cLease, "Lease left", barWidth(w) + 7},
	)
	if wide {
		cols = append(cols, colSpec{cClaims, "Claims", 6}, colSpec{cVersion, "Ver", 3})
	} else {
		cols = append(cols, colSpec{cClaims, "Cl", 2}, colSpec{cVersion, "v", 2})
	}
	used := 2 // the marker column
	for _, c := range cols {
		used += c.w + 1
	}
	if watch {
		return append(cols, colSpec{cDone, "ProcessedAtUtc", max(2, w-used)})
	}
	by := colSpec{cBy, "Processed by", max(2, w-used)}
	if by.w < len(by.title) {
		by.title = "By"
	}
	return append(cols, by)
}

// digits is the number of decimal digits of n.
func digits(n int64) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// statusStyle is the style of an outbox status.
func statusStyle(st *Styles, status string) lipgloss.Style {
	switch status {
	case engine.StatusProcessing:
		return st.Processing
	case engine.StatusProcessed:
		return st.Processed
	}
	return st.Pending
}

// leaseCell is the lease's time left, as a bar and in milliseconds, or EXPIRED once the clock
// has passed LockedUntilUtc of a row still Processing. Other rows hold no live lease.
func leaseCell(f *frame, r *engine.Row, w int, st *Styles) string {
	if r.Status != engine.StatusProcessing || r.LockedUntil.IsZero() {
		return spaces(w)
	}
	left := r.LockedUntil.Sub(f.Now)
	if expired(r, f.Now) {
		return st.Expired.Render("EXPIRED") + spaces(w-len("EXPIRED"))
	}
	bw := w - 7
	lease := f.Settings.Lease
	filled := bw
	if lease > 0 && left < lease {
		filled = int((int64(left)*int64(bw) + int64(lease) - 1) / int64(lease))
	}
	return st.BarFull.Render(strings.Repeat("█", filled)) + st.BarEmpty.Render(strings.Repeat("░", bw-filled)) +
		" " + padPlain(shortDuration(left), 6)
}

// shortDuration writes a lease's time left in at most 6 cells: 500ms, 12.5s, 3m0s.
func shortDuration(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 100*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// byCell lists who processed the message, from the ledger of processing attempts. A message
// processed more than once is marked "!!" and "×N", in the duplicate colour; one processed again
// only after its owner lost the lease (again: at-least-once, no failure) is marked "↻", plainly.
func byCell(attempts []engine.Attempt, idx map[string]int, changed, again bool, st *Styles) string {
	if len(attempts) == 0 {
		return "-"
	}
	names := make([]string, 0, len(attempts))
	for i, a := range attempts {
		name := shortName(a.Worker)
		wi, ok := idx[a.Worker]
		switch {
		case changed && i == len(attempts)-1:
			name = st.Changed.Render(name) // the attempt the last step made
		case ok:
			name = st.worker(wi).Render(name)
		}
		names = append(names, name)
	}
	text := strings.Join(names, " ")
	if len(attempts) > 1 && again {
		return "↻ " + text + fmt.Sprintf(" ×%d", len(attempts))
	}
	if len(attempts) > 1 {
		text = st.Duplicate.Render("!!") + " " + text + " " + st.Duplicate.Render(fmt.Sprintf("×%d", len(attempts)))
	}
	return text
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
