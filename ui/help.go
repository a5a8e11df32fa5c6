package ui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// footItem is one key in the footer: its binding (which says whether it is on), the terse words
// it gets there, and a rank: a narrow window drops the highest ranks first.
type footItem struct {
	b         key.Binding
	key, desc string
	rank      int
}

// footItems are the footer's keys in display order: the workshop's keys first, and the toggle
// of the lesson on screen in the place of l.
func (m Model) footItems() []footItem {
	k := m.keys
	sel := k.Select.Help().Key
	if k.free {
		return []footItem{
			{k.Free, "g", "stop free run", 0}, {k.Select, sel, "select", 3}, {k.Crash, "x", "crash", 1},
			{k.Restart, "r", "restart", 1}, {k.Pause, "z", "pause", 2}, {k.PastLease, "f", "expire", 1},
			{k.Clock, "+", "clock", 2}, {k.Slower, "< >", "pace", 4}, {k.Help, "?", "keys", 0}, {k.Quit, "q", "quit", 3},
		}
	}
	teach, teachWord := k.Leasing, "leasing"
	if m.frame != nil {
		if b, ok := m.toggleBinding(m.frame.Teaches); ok {
			teach, teachWord = b, toggles[m.frame.Teaches].short
		}
	}
	return []footItem{
		{k.Step, "space", "step", 0}, {k.Select, sel, "select", 4}, {k.Crash, "x", "crash", 1},
		{k.Restart, "r", "restart", 1}, {k.Pause, "z", "pause", 3}, {teach, teach.Help().Key, teachWord, 1},
		{k.PastLease, "f", "expire", 1}, {k.Clock, "+", "clock", 2}, {k.Play, "p", "play", 2},
		{k.Free, "g", "free-run", 3}, {k.NextScenario, "tab", "next", 4}, {k.Reset, "R", "reset", 4},
		{k.Explain, "i", "about", 4}, {k.Help, "?", "keys", 0}, {k.Quit, "q", "quit", 3},
	}
}

// toggleBinding is the key of toggle name.
func (m Model) toggleBinding(name string) (key.Binding, bool) {
	k := m.keys
	b, ok := map[string]key.Binding{"leasing": k.Leasing, "atomic-claim": k.AtomicClaim,
		"ownership-check": k.OwnershipCheck, "fencing": k.Fencing, "heartbeat": k.Heartbeat}[name]
	return b, ok
}

// shortHelp is the footer in one line of at most w cells: as many keys as fit, the least
// needed dropped first, separated by " · " or, when that is too wide, by two spaces.
func (m Model) shortHelp(w int) string {
	items := m.footItems()
	render := func(sep string, maxRank int) string {
		st := &m.styles.Help
		var parts []string
		for _, it := range items {
			if it.rank <= maxRank && it.b.Enabled() {
				parts = append(parts, st.ShortKey.Render(it.key)+" "+st.ShortDesc.Render(it.desc))
			}
		}
		return strings.Join(parts, st.ShortSeparator.Render(sep))
	}
	for _, sep := range []string{" · ", "  "} {
		for rank := 4; rank >= 0; rank-- {
			if s := render(sep, rank); width(s) <= w {
				return s
			}
			if sep == " · " && rank == 2 {
				break // the workshop's keys come before the wider separator
			}
		}
	}
	return cut(render("  ", 0), w)
}

// helpEntry is one entry of the ? screen: one key, or a few that belong together ("← →").
type helpEntry struct {
	bs        []key.Binding // shown when any of them is on
	key, desc string
}

// one is the entry of a single binding, with its own help.
func one(b key.Binding) helpEntry { return helpEntry{[]key.Binding{b}, b.Help().Key, b.Help().Desc} }

// helpGroups are the ? screen's groups, each under a title.
func (m Model) helpGroups() []struct {
	title   string
	entries []helpEntry
} {
	k := m.keys
	return []struct {
		title   string
		entries []helpEntry
	}{
		{"step", []helpEntry{one(k.Step), one(k.StepWorker), one(k.Select),
			{[]key.Binding{k.PrevWorker, k.NextWorker}, "← →", "previous/next worker"}}},
		{"act", []helpEntry{one(k.Crash), one(k.Restart), one(k.Pause), one(k.Clock), one(k.PastLease)}},
		{"toggles", []helpEntry{one(k.Leasing), one(k.AtomicClaim), one(k.OwnershipCheck), one(k.Fencing),
			{[]key.Binding{k.Heartbeat}, k.Heartbeat.Help().Key, k.Heartbeat.Help().Desc + " — each from the next action on"}}},
		{"run", []helpEntry{one(k.Play), one(k.Free),
			{[]key.Binding{k.Slower, k.Faster}, "< >", k.Slower.Help().Desc + "/" + k.Faster.Help().Desc},
			one(k.Reset), one(k.NextScenario)}},
		{"screen", []helpEntry{
			{[]key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, "↑ ↓ pgup pgdn home end", "scroll the outbox"},
			one(k.Explain), one(k.Help), one(k.Quit)}},
	}
}

// fullHelpLines is the ? screen at width w: each group of keys on its own line(s) under a title,
// flowed to the width, so that every key shows at 80 columns too. Keys that are off now are left
// out.
func (m Model) fullHelpLines(w int) []string {
	st := &m.styles.Help
	var lines []string
	for _, g := range m.helpGroups() {
		var items []string
		for _, e := range g.entries {
			if slices.ContainsFunc(e.bs, key.Binding.Enabled) {
				items = append(items, st.FullKey.Render(e.key)+" "+st.FullDesc.Render(e.desc))
			}
		}
		if len(items) > 0 {
			lines = append(lines, flow(pad(g.title, 9), items, st.FullSeparator.Render(" · "), w)...)
		}
	}
	return lines
}

// helpView is the footer: the short help, or every key after ?.
func (m Model) helpView(h int) []string {
	if h <= 0 {
		return nil
	}
	if m.showHelp {
		return box(m.fullHelpLines(m.layout.width), m.layout.width, h)
	}
	return box([]string{m.shortHelp(m.layout.width)}, m.layout.width, h)
}
