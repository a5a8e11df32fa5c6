package diagram

import (
	"fmt"

	"leaselab/ui/common"
)

// legendOf says each mark in words, the ones the lesson turns on first: a short window keeps
// those.
var legendOf = []struct {
	r           rune
	text, short string
}{
	{MarkClaim, "claim", "claim"}, {MarkReclaim, "reclaim (lease had ended)", "reclaim"},
	{fillHeld, "lease held", "held"}, {fillStuck, "owner crashed/paused", "owner down"},
	{fillDone, "row Processed", "Processed"}, {FillEnd, "LockedUntilUtc", "LockedUntilUtc"},
	{markFinal, "finalized", "finalized"}, {markRejected, "REJECTED: 0 rows, rolled back", "REJECTED"},
	{markViolate, "wrote WITHOUT OWNING", "NOT OWNER"}, {markCrash, "crash", "crash"},
	{markPause, "pause", "pause"}, {markResume, "wake", "wake"},
	{MarkTake, "take (UPDATE by Id)", "take"}, {markSelect, "select", "select"}, {markLoad, "load", "load"},
	{markCheck, "provider call", "call"}, {markExpired, "lease over before call", "expired"},
	{markRenew, "renewed", "renew"}, {markLost, "renewal lost", "lost"}, {markRestart, "restart", "restart"},
	{markBlocked, "blocked by a lease", "blocked"}, {markEmpty, "nothing to claim", "empty"},
}

// legend lists the marks the diagram uses, in words (in a word each when short).
func (st *spaceTime) legend(short bool) []string {
	var items []string
	for _, e := range st.legendItems() {
		if short {
			items = append(items, string(e.r)+" "+e.short)
		} else {
			items = append(items, string(e.r)+" "+e.text)
		}
	}
	return items
}

// legendEntry is one mark or fill of the legend with its words.
type legendEntry struct {
	r           rune
	text, short string
}

// legendItems are the entries of legendOf whose mark or fill the diagram uses, in its order.
func (st *spaceTime) legendItems() []legendEntry {
	used := map[rune]bool{}
	for _, lane := range st.lanes {
		for _, r := range lane.marks {
			used[r] = true
		}
	}
	for _, l := range st.Leases {
		used[FillEnd] = true
		for _, r := range l.marks {
			used[r] = true
		}
		for _, f := range l.fills {
			used[f.fill] = true
		}
	}
	var items []legendEntry
	for _, e := range legendOf {
		if used[e.r] {
			items = append(items, legendEntry(e))
		}
	}
	return items
}

// momentLines are the run's moments under a heading, in room lines at most: the latest when
// not all fit.
func momentLines(ms []string, w, room int) []string {
	if len(ms) == 0 || room < 3 {
		return nil
	}
	out := []string{"", common.Rule("What the bars show", w)}
	if n := room - len(out); len(ms) > n {
		ms = append([]string{fmt.Sprintf("… %d earlier", len(ms)-n+1)}, ms[len(ms)-n+1:]...)
	}
	for _, m := range ms {
		out = append(out, common.Cut("  "+m, w))
	}
	return out
}
