package plain

import (
	"fmt"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
	"leaselab/ui/common"
)

// What plain mode says after each key, in the order a listener needs it: the events the key's
// action wrote (the engine's own sentences), then the rows that changed with their Status,
// LockedBy and LockedUntilUtc (and the other columns the lab shows), then, at the end of the
// run, the checks and the verdict. Every figure and word comes from the frames the engine read
// back; nothing here is remembered from an earlier screen.

// maxEvents and maxRows bound what one key prints: a concurrent phase may write hundreds of
// events, a bulk load touch thousands of rows. The rest is counted, not read out.
const (
	maxEvents = 40
	maxRows   = 12
)

// intro says what the lesson is, how it is set, what the outbox holds and what is expected.
func intro(p *printer, f *common.Frame, k keys) {
	about(p, f)
	state(p, f, 0)
	if f.Summary != nil {
		if rs := f.Summary.Expectations; len(rs) > 0 {
			items := make([]string, len(rs))
			for i, r := range rs {
				items[i] = r.Expect
			}
			p.line("When the scenario is done, expected%s: %s.", withWhen(rs), strings.Join(items, ", "))
		}
	}
	p.line("Press %s to step, %s for the keys, %s to quit.", k.lab.Step.Help().Key, k.lab.Help.Help().Key, k.lab.Quit.Help().Key)
}

// about is the lesson's title and explanation.
func about(p *printer, f *common.Frame) {
	p.line("Lesson %s: %s", f.Name, f.Title)
	for _, l := range f.Explain {
		p.line("  %s", l)
	}
}

// state is the run as it stands: the settings, the workers (sel the selected one), the clock
// and every row (the first maxRows of a large outbox).
func state(p *printer, f *common.Frame, sel int) {
	p.line("Settings: %s; lease %s.", settingsWords(f), f.Settings.Lease)
	for i, w := range f.Workers {
		mark := ""
		if i == sel {
			mark = " (selected)"
		}
		p.line("Worker %d, %s%s: %s.", i+1, w.Name, mark, workerWords(w))
	}
	p.line("Clock: %s. The outbox holds %d %s:", engine.FormatClock(f.Now), len(f.Rows), common.Plural(len(f.Rows), "message"))
	for i := range f.Rows {
		if i == maxRows {
			p.line("  ... and %d more.", len(f.Rows)-maxRows)
			break
		}
		p.line("  %s", rowWords(f, &f.Rows[i], nil, nil))
	}
}

// settingsWords are the toggles the lesson shows, "leasing on, atomic-claim on, …".
func settingsWords(f *common.Frame) string {
	var parts []string
	for _, t := range engine.Registry() {
		if !toggleOn(t.Name, f.RowLocks, f.LessonToggles) {
			continue
		}
		on := t.Of(f.Settings)
		part := t.Name + " " + engine.OnOff(on)
		if t.Name == f.Teaches {
			part += " (this lesson's)"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// changes says what changed from frame prev to frame next: the new events, then the rows that
// changed. It reports whether it said anything.
func changes(p *printer, prev, next *common.Frame) bool {
	said := events(p, prev, next)
	return rows(p, prev, next) || said
}

// ended reports whether the run came to its end between prev and next (or came to it again
// after a step back).
func ended(prev, next *common.Frame) bool {
	return next.Done && (!prev.Done || prev.EventCount > next.EventCount)
}

// events says the events written since prev, oldest first: the engine's own sentences.
func events(p *printer, prev, next *common.Frame) bool {
	var fresh []engine.Event
	for _, e := range next.Events {
		if e.Seq > prev.EventCount {
			fresh = append(fresh, e)
		}
	}
	if len(fresh) == 0 {
		return false
	}
	if unread := next.EventCount - prev.EventCount - len(fresh); unread > 0 {
		p.line("(%d earlier %s of this step are counted in the ledgers, not read out.)", unread, common.Plural(unread, "event"))
	}
	skip := max(0, len(fresh)-maxEvents)
	if skip > 0 {
		p.line("(%d %s of this step are counted in the ledgers, not read out; the last %d:)", skip, common.Plural(skip, "event"), maxEvents)
	}
	for _, e := range fresh[skip:] {
		text := strings.TrimSuffix(words.Escape(e.Words()), ".")
		if e.Kind == engine.EvPhase {
			text = "Phase: " + text // the lab's "== … ==" heading
		}
		p.line("%s %s.", engine.FormatClock(e.At), text)
	}
	return true
}

// rows says each row whose cells changed from prev to next, the changed cells with what they
// were.
func rows(p *printer, prev, next *common.Frame) bool {
	ch := common.Diff(prev, next)
	old := make(map[int64]*engine.Row, len(prev.Rows))
	for i := range prev.Rows {
		old[prev.Rows[i].ID] = &prev.Rows[i]
	}
	n := 0
	for i := range next.Rows {
		r := &next.Rows[i]
		if !ch.Row(r.ID) || old[r.ID] == nil {
			continue
		}
		if n == maxRows {
			p.line("... and more rows changed: %d in all.", len(ch.Cells))
			break
		}
		p.line("Row %s", rowWords(next, r, old[r.ID], prev))
		n++
	}
	return n > 0
}

// rowWords is a row as the lab's table shows it: Status, LockedBy, LockedUntilUtc (and whether
// the lease has expired), the payment, Claims, the lease version, NextAttemptUtc where the
// lesson uses backoff, and who processed the message. With was (the row in frame before), each
// cell that changed says what it was.
func rowWords(f *common.Frame, r, was *engine.Row, before *common.Frame) string {
	cell := func(name, now, then string) string {
		if was != nil && now != then {
			return fmt.Sprintf("%s %s (was %s)", name, now, then)
		}
		return name + " " + now
	}
	var w engine.Row
	if was != nil {
		w = *was
	}
	parts := []string{
		r.IdempotencyKey + ":",
		cell("Status", r.Status, w.Status) + ",",
		cell("LockedBy", orNone(r.LockedBy), orNone(w.LockedBy)) + ",",
		cell("LockedUntilUtc", clockOrNone(r.LockedUntil), clockOrNone(w.LockedUntil)),
	}
	if common.Expired(r, f.Now) {
		parts[len(parts)-1] += " (EXPIRED: the clock, " + engine.FormatClock(f.Now) + ", has passed it)"
	}
	parts[len(parts)-1] += ","
	parts = append(parts, cell("payment", r.PaymentStatus, w.PaymentStatus)+",",
		cell("Claims", fmt.Sprint(r.Attempts), fmt.Sprint(w.Attempts))+",",
		cell("lease version", fmt.Sprint(r.LeaseVersion), fmt.Sprint(w.LeaseVersion)))
	if f.Settings.Backoff || f.Teaches == engine.ToggleBackoff {
		parts[len(parts)-1] += ","
		parts = append(parts, cell("NextAttemptUtc", clockOrNone(r.NextAttempt), clockOrNone(w.NextAttempt)))
	}
	by := processedBy(f, r.IdempotencyKey)
	if by != "" && (before == nil || processedBy(before, r.IdempotencyKey) != by) {
		parts[len(parts)-1] += ","
		parts = append(parts, "processed by "+by)
	}
	return strings.Join(parts, " ") + "."
}

// processedBy names who processed message key, in order ("Worker-A, then Worker-B"), from the
// ledger of processing attempts; "" when nobody has.
func processedBy(f *common.Frame, key string) string {
	var names []string
	for _, a := range f.Attempts[key] {
		names = append(names, a.Worker)
	}
	return strings.Join(names, ", then ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func clockOrNone(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return engine.FormatClock(t)
}
