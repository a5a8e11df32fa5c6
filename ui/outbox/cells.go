package outbox

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"leaselab/engine"
	"leaselab/ui/common"
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
	cNext // NextAttemptUtc, where the lesson uses backoff and the table is wide
)

// colSpec is one column: what it shows, its heading and its width.
type colSpec struct {
	id    colID
	title string
	w     int
}

// leaseTextW is the room the lease cell gives the time left ("500ms", "12.5s") after its bar.
const leaseTextW = 7

// byWant is the room "Processed by" needs for a message processed twice: "!! A B ×2".
const byWant = 9

// columns picks the columns for w cells, sized for the rows they show: every column the lesson
// talks about (Status, Payment, LockedBy, LockedUntilUtc, the lease, Claims, the version) at
// any width the lab lays out, shorter headings and a bar without its time when narrow.
// "Processed by" takes what is left; the watch, which has no ledger, shows ProcessedAtUtc there
// instead.
//
// With backoff (a lesson that uses it), a wide table has NextAttemptUtc after LockedUntilUtc:
// when a row released by a failed attempt may be claimed again; a narrow one shows the wait in
// the lease cell of such a row (it holds no lease), as leaseCell does.
func columns(w int, rows []engine.Row, watch, backoff bool) []colSpec {
	idW, keyW, ownerW, statusW := 2, 3, 8, 10
	for i := range rows {
		r := &rows[i]
		if r.Status == engine.StatusDeadLettered {
			statusW = len(engine.StatusDeadLettered) // wider only while a row is dead-lettered
		}
		idW = max(idW, digits(r.ID))
		keyW = max(keyW, len(r.IdempotencyKey))
		ownerW = max(ownerW, len(r.LockedBy))
	}
	keyW, ownerW = min(keyW, 16), min(ownerW, 16)
	wide := w >= 100
	cols := []colSpec{{cID, "Id", idW}, {cKey, "Key", keyW}, {cStatus, "Status", statusW},
		{cPayment, "Payment", 7}, {cOwner, "LockedBy", ownerW}, {cUntil, "LockedUntilUtc", 14}}
	lease := colSpec{cLease, "Lease left", 10 + leaseTextW}
	claims, version := colSpec{cClaims, "Claims", 6}, colSpec{cVersion, "Ver", 3}
	if !wide {
		lease.title = "Lease"
		claims, version = colSpec{cClaims, "Cl", 2}, colSpec{cVersion, "v", 2}
	}
	used := 2 // the marker column
	for _, c := range append(cols, claims, version) {
		used += c.w + 1
	}
	if !wide {
		// The bar alone (7 cells, EXPIRED's width), and its time when "Processed by" keeps room.
		lease.w = len("EXPIRED")
		if room := w - used - lease.w - 1 - byWant; room >= leaseTextW {
			lease.w += min(room-leaseTextW, 3) + leaseTextW
		}
	}
	if wide && backoff {
		next := colSpec{cNext, "NextAttemptUtc", 14}
		used += next.w + 1
		cols = append(cols, next)
	}
	used += lease.w + 1
	cols = append(cols, lease, claims, version)
	if watch {
		done := colSpec{cDone, "ProcessedAtUtc", max(2, w-used)}
		if done.w < len(done.title) {
			done.title = "Done at"
		}
		return append(cols, done)
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
func statusStyle(st *common.Styles, status string) lipgloss.Style {
	switch status {
	case engine.StatusProcessing:
		return st.Processing
	case engine.StatusProcessed:
		return st.Processed
	case engine.StatusDeadLettered:
		return st.Failed
	}
	return st.Pending
}

// deadCell is, in a dead-lettered row's lease cell (it holds no lease), the row's LastError,
// without its "provider: " prefix, cut to the w cells there are.
func deadCell(lastErr string, w int, st *common.Styles) string {
	if lastErr == "" {
		return common.Spaces(w)
	}
	lastErr = strings.TrimPrefix(lastErr, "provider: ") // the column is the provider's answer
	return st.Failed.Render(common.PadPlain(lastErr, w))
}

// leaseCell is the lease's time left, as a bar and in milliseconds, or EXPIRED once the clock
// has passed LockedUntilUtc of a row still Processing. Other rows hold no live lease.
func leaseCell(f *common.Frame, r *engine.Row, w int, st *common.Styles) string {
	if r.RowLock != "" && r.Status != engine.StatusProcessing {
		return rowLockCell(r.RowLock, w, st)
	}
	if r.Status == engine.StatusDeadLettered {
		return deadCell(f.LastErrors[r.IdempotencyKey], w, st)
	}
	if r.Status == engine.StatusPending && r.NextAttempt.After(f.Now) {
		// Released by a failed attempt, waiting for its backoff: no lease, a wait.
		wait := common.ShortDuration(r.NextAttempt.Sub(f.Now))
		for _, text := range []string{"wait " + wait, "in " + wait} {
			if len(text) <= w {
				wait = text
				break
			}
		}
		return st.Subtle.Render(common.PadPlain(wait, w))
	}
	if r.Status != engine.StatusProcessing || r.LockedUntil.IsZero() {
		return common.Spaces(w)
	}
	left := r.LockedUntil.Sub(f.Now)
	if common.Expired(r, f.Now) {
		return st.Expired.Render("EXPIRED") + common.Spaces(w-len("EXPIRED"))
	}
	bw, text := w-leaseTextW, true
	if bw < 5 {
		bw, text = w, false // narrow: the bar alone
	}
	lease := f.Settings.Lease
	filled := bw
	if lease > 0 && left < lease {
		filled = int((int64(left)*int64(bw) + int64(lease) - 1) / int64(lease))
	}
	bar := st.BarFull.Render(strings.Repeat("█", filled)) + st.BarEmpty.Render(strings.Repeat("░", bw-filled))
	if !text {
		return bar
	}
	return bar + " " + common.PadPlain(common.ShortDuration(left), leaseTextW-1)
}

// byCell lists who processed the message, from the ledger of processing attempts. A message
// processed more than once is marked "!!" and "×N", in the duplicate colour; one processed again
// only after its owner lost the lease (again: at-least-once, no failure) is marked "↻", plainly.
func byCell(attempts []engine.Attempt, idx map[string]int, changed, again bool, st *common.Styles) string {
	if len(attempts) == 0 {
		return "-"
	}
	names := make([]string, 0, len(attempts))
	for i, a := range attempts {
		name := common.ShortName(a.Worker)
		wi, ok := idx[a.Worker]
		switch {
		case changed && i == len(attempts)-1:
			name = st.Changed.Render(name) // the attempt the last step made
		case ok:
			name = st.Worker(wi).Render(name)
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

// rowLockCell is the lease cell of a row whose lock an open transaction holds (PostgreSQL): the
// row has no lease yet, but a claim that does not skip locked rows waits for it. The holder by
// its worker name when it is one ("Worker-A" → "A").
func rowLockCell(holder string, w int, st *common.Styles) string {
	short := common.ShortName(holder)
	text := "row lock: " + short
	if len(text) > w {
		text = "lock " + short
	}
	if len(text) > w {
		text = "lock"
	}
	return st.Warn.Render(text) + common.Spaces(max(0, w-len(text)))
}

// usesBackoff reports whether the frame's lesson uses retry backoff, so that the table shows
// when a row may be claimed again: its lesson teaches it, or it is on.
func usesBackoff(f *common.Frame) bool {
	return f.Settings.Backoff || f.Teaches == engine.ToggleBackoff
}
