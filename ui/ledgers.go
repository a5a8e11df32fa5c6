package ui

import (
	"fmt"
	"slices"
	"strings"

	"leaselab/engine"
)

// ledgerItems are the run's ledgers, most telling first: duplicates, attempts, checks with the
// provider, ownership violations, claims, payments.
func (m Model) ledgerItems() []string {
	f, st := m.frame, &m.styles
	if f == nil || f.Summary == nil {
		return nil
	}
	sum, t := f.Summary, f.Total
	dup := fmt.Sprintf("duplicated messages %d", sum.ProcessedMoreThanOnce)
	if sum.ProcessedMoreThanOnce > 0 {
		dup = st.Duplicate.Render("!! " + dup)
	}
	viol := fmt.Sprintf("ownership violations %d", sum.OwnershipViolations)
	if sum.OwnershipViolations > 0 {
		viol = st.Duplicate.Render("!! " + viol)
	}
	items := []string{
		dup,
		fmt.Sprintf("processing attempts %d", sum.ProcessingAttempts),
		fmt.Sprintf("status checks %d", sum.StatusChecks),
		viol,
		fmt.Sprintf("claims won %d · empty %d · blocked %d", sum.ClaimsWon, sum.ClaimsEmpty, sum.ClaimsBlocked),
		fmt.Sprintf("reclaims %d", sum.Reclaims),
		fmt.Sprintf("payments Paid %d · Failed %d · Pending %d", sum.Payments.Paid, sum.Payments.Failed, sum.Payments.Pending),
		fmt.Sprintf("rejected finalizes %d", sum.RejectedFinalizes),
	}
	if t.Loads > 0 {
		items = append(items, fmt.Sprintf("rows loaded %d", sum.RowsLoaded))
	}
	if t.Renewals+t.LostRenewals > 0 {
		items = append(items, fmt.Sprintf("renewals %d · lost %d", t.Renewals, t.LostRenewals))
	}
	return items
}

// ledgerLines lays the ledgers out for w cells: under a title in the wide layout, after a
// "Ledgers" label in the narrow one.
func (m Model) ledgerLines(w int, wide bool) []string {
	items := m.ledgerItems()
	if wide {
		return append([]string{m.styles.Section.Render(rule("Ledgers", w))}, flow("", items, " · ", w)...)
	}
	return flow(m.styles.Section.Render("Ledgers")+"  ", items, " │ ", w)
}

// ledgersView is the ledgers in exactly h lines.
func (m Model) ledgersView(w, h int) []string {
	return box(m.ledgerLines(w, m.layout.wide), w, h)
}

// checksView is the safety checks, live: one line each under a title, failing ones first, or
// one summary line when h is 1.
func (m Model) checksView(w, h int) []string {
	if h <= 0 {
		return nil
	}
	st := &m.styles
	if m.frame == nil || m.frame.Summary == nil {
		return box([]string{st.Section.Render("Safety checks")}, w, h)
	}
	checks := slices.Clone(m.frame.Summary.Checks)
	slices.SortStableFunc(checks, func(a, b engine.Check) int {
		switch {
		case a.OK == b.OK:
			return 0
		case !a.OK:
			return -1
		}
		return 1
	})
	failing := 0
	for _, c := range checks {
		if !c.OK {
			failing++
		}
	}
	live := "live"
	if m.frame.Done {
		live = "final"
	}
	if h == 1 {
		line := st.Section.Render("Checks ("+live+")") + "  " + st.OK.Render(fmt.Sprintf("✓ %d hold", len(checks)-failing))
		if failing > 0 {
			names := []string{}
			for _, c := range checks[:failing] {
				names = append(names, c.Name)
			}
			line += "  " + st.Fail.Render(fmt.Sprintf("✗ %d fail:", failing)) + " " + strings.Join(names, "; ")
		}
		return []string{cut(line, w)}
	}
	lines := []string{st.Section.Render(rule(fmt.Sprintf("Safety checks (%s): %d of %d hold", live, len(checks)-failing, len(checks)), w))}
	for _, c := range checks {
		mark := st.OK.Render("✓ ok  ")
		if !c.OK {
			mark = st.Fail.Render("✗ FAIL")
		}
		lines = append(lines, mark+" "+c.Name+st.Subtle.Render(" — "+c.Detail))
	}
	return box(lines, w, h)
}

// verdictView is the verdict once the scenario is done, with the scenario's expectations.
func (m Model) verdictView(w, h int) []string {
	if h <= 0 {
		return nil
	}
	st, f := &m.styles, m.frame
	if f == nil {
		return box(nil, w, h)
	}
	if !f.Done || f.Summary == nil {
		return box([]string{st.Subtle.Render("Verdict: when the scenario is done")}, w, h)
	}
	sum := f.Summary
	banner := st.Failing.Render(" VERDICT: FAIL ") + " " + st.Fail.Render(sum.Verdict)
	if sum.Passed {
		banner = st.Pass.Render(" VERDICT: PASS ") + " " + st.OK.Render(sum.Verdict)
	}
	met, missed := 0, []string{}
	for _, e := range sum.Expectations {
		if e.OK {
			met++
		} else {
			missed = append(missed, fmt.Sprintf("%s (got %s)", e.Expect, e.Actual))
		}
	}
	expect := fmt.Sprintf("scenario expectations: %d of %d met", met, len(sum.Expectations))
	if len(missed) > 0 {
		expect = st.Warn.Render(expect + ": not " + strings.Join(missed, ", "))
	}
	return box([]string{banner, expect}, w, h)
}
