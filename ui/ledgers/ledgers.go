// Package ledgers is the ledgers pane: what the workers did, counted, and the rows as they
// stand, beside the checks under the workers.
package ledgers

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Pane is the run's ledgers, drawn from the scene: what the workers did, counted, and
// the rows as they stand. It has no keys.
type Pane struct{ common.Scene }

// Items are the run's ledgers, most telling first: work done twice (by two owners at
// once, again after a lost lease, then written twice), attempts, the payments as the rows show them, the side effects (calls to the
// provider, per key when a key was called more than once), ownership, claims.
func (m Pane) Items() []string {
	f, st := m.Frame, m.Styles
	if f == nil || f.Summary == nil {
		return nil
	}
	sum, t := f.Summary, f.Total
	alarm := func(text string, n int) string {
		if n > 0 {
			return st.Duplicate.Render("!! " + text)
		}
		return text
	}
	// Duplicated: processed by two owners at once, the failure. A message processed again after
	// its owner lost the lease is at-least-once delivery, counted apart and not an alarm.
	items := []string{
		alarm(fmt.Sprintf("duplicated messages %d", sum.ProcessedByTwoOwners), sum.ProcessedByTwoOwners),
	}
	if sum.DeadLettered > 0 || sum.ProviderFailures > 0 {
		items = append(items, endsItem(sum, m.Frame.Done))
	}
	if n := sum.ReprocessedAfterLostLease; n > 0 {
		items = append(items, fmt.Sprintf("re-processed %d (at-least-once)", n))
	}
	if n := sum.ReprocessedBySameWorker; n > 0 {
		items = append(items, fmt.Sprintf("processed again by the same worker %d", n))
	}
	if sum.FinalizedMoreThanOnce > 0 || sum.ProcessedMoreThanOnce > 0 {
		items = append(items, alarm(fmt.Sprintf("finalized more than once %d", sum.FinalizedMoreThanOnce), sum.FinalizedMoreThanOnce))
	}
	// A rejected finalize is what a lesson's verdict may name: once there is one, it comes
	// with the write counts, so that a short pane keeps it.
	rejected := fmt.Sprintf("rejected finalizes %d", sum.RejectedFinalizes)
	if sum.RejectedFinalizes > 0 {
		items = append(items, rejected)
	}
	items = append(items,
		fmt.Sprintf("processing attempts %d", sum.ProcessingAttempts),
		fmt.Sprintf("payments Paid %d · Failed %d · Pending %d", sum.Payments.Paid, sum.Payments.Failed, sum.Payments.Pending),
		sideEffects(sum),
		alarm(fmt.Sprintf("ownership violations %d", sum.OwnershipViolations), sum.OwnershipViolations),
		claimCounts(sum),
		fmt.Sprintf("reclaims %d", sum.Reclaims),
	)
	if sum.RejectedFinalizes == 0 {
		items = append(items, rejected)
	}
	if t.Loads > 0 {
		items = append(items, fmt.Sprintf("rows loaded %d", sum.RowsLoaded))
	}
	if t.Renewals+t.LostRenewals > 0 {
		items = append(items, fmt.Sprintf("renewals %d · lost %d", t.Renewals, t.LostRenewals))
	}
	return items
}

// endsItem is the three ends of a message, counted apart once a run has failures: finished,
// dead-lettered (parked, not lost) and lost (once the run is done; before, not finished yet),
// with the provider's failures and the retries they caused.
func endsItem(sum *engine.Summary, done bool) string {
	rest := "not finished"
	if done {
		rest = "lost"
	}
	s := fmt.Sprintf("finished %d · dead-lettered %d · %s %d", sum.Outbox.Processed, sum.DeadLettered, rest, sum.Lost)
	if sum.ProviderFailures > 0 {
		s += fmt.Sprintf(" · provider failures %d · retries %d", sum.ProviderFailures, sum.Retries)
	}
	return s
}

// sideEffects is the provider's own count of status checks, the side effect no database
// rollback undoes, with the keys it was called for more than once.
func sideEffects(sum *engine.Summary) string {
	s := fmt.Sprintf("status checks %d", sum.StatusChecks)
	var twice []string
	for _, k := range slices.Sorted(maps.Keys(sum.StatusChecksByKey)) {
		if n := sum.StatusChecksByKey[k]; n > 1 {
			twice = append(twice, fmt.Sprintf("%s ×%d", k, n))
		}
	}
	switch {
	case len(twice) == 0:
		return s
	case len(twice) <= 2:
		return s + " (" + strings.Join(twice, ", ") + ")"
	}
	return s + fmt.Sprintf(" (%d %s called more than once)", len(twice), common.Plural(len(twice), "key"))
}

// ledgerGroups is the run's ledgers on lines of at most w cells, the most telling first: short
// items share a line, a long one breaks at its " · " onto lines of its own. Each group is the
// lines of one screen line's items, kept or left out whole.
func (m Pane) ledgerGroups(w int) [][]string {
	groups, _ := m.countedGroups(w)
	return groups
}

// countedGroups is ledgerGroups with the number of items in each group.
func (m Pane) countedGroups(w int) (groups [][]string, items []int) {
	line, n := "", 0
	flush := func() {
		if line != "" {
			groups, items = append(groups, []string{line}), append(items, n)
			line, n = "", 0
		}
	}
	for _, it := range m.Items() {
		switch {
		case common.Width(it) > w:
			flush()
			g := common.WrapHanging(it, w, 2)
			if segs := strings.Split(it, " · "); len(segs) > 1 {
				g = common.FlowWrap(segs, " · ", w-2)
				for i := 1; i < len(g); i++ {
					g[i] = "  " + g[i]
				}
			}
			groups, items = append(groups, g), append(items, 1)
		case line == "":
			line, n = it, 1
		case common.Width(line)+3+common.Width(it) <= w:
			line, n = line+" · "+it, n+1
		default:
			flush()
			line, n = it, 1
		}
	}
	flush()
	return groups, items
}

// Body is every line of the ledgers at width w.
func (m Pane) Body(w int) []string {
	var lines []string
	for _, g := range m.ledgerGroups(w) {
		lines = append(lines, g...)
	}
	return lines
}

// Lines is the ledgers in exactly h lines: the items that fit whole, in their order; when
// some do not, the last line says how many are left out.
func (m Pane) Lines(w, h int) []string {
	groups, items := m.countedGroups(w)
	fit := func(h int) (lines []string, left int) {
		for i, g := range groups {
			if len(lines)+len(g) > h {
				left += items[i] // an item too tall gives way to shorter ones after it
				continue
			}
			lines = append(lines, g...)
		}
		return lines, left
	}
	lines, left := fit(h)
	if left == 0 || h <= 0 {
		return common.Box(lines, w, h)
	}
	more := func(n int) string { return m.Styles.Subtle.Render(fmt.Sprintf("+%d more", n)) }
	if last := len(lines) - 1; last >= 0 && common.Width(lines[last])+2+common.Width(more(left)) <= w {
		lines[last] += "  " + more(left) // after the last item, when it has room
		return common.Box(lines, w, h)
	}
	lines, left = fit(h - 1)
	return common.Box(append(lines, more(left)), w, h)
}

// claimCounts is what the claims got: won, empty, blocked by a live lease, and (apart, when
// there are any) waiting for a backoff.
func claimCounts(sum *engine.Summary) string {
	s := fmt.Sprintf("claims won %d · empty %d · blocked %d", sum.ClaimsWon, sum.ClaimsEmpty, sum.ClaimsBlocked)
	if sum.ClaimsBackoff > 0 {
		s += fmt.Sprintf(" · waiting (backoff) %d", sum.ClaimsBackoff)
	}
	return s
}
