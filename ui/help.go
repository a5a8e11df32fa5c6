package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/diagram"
	"leaselab/ui/question"
)

// footItem is one entry in the footer: its bindings (shown when any is on; their keys are
// named by the bindings), the terse words it gets there, and a rank: a narrow window drops the
// highest ranks first.
type footItem struct {
	bs   []key.Binding
	desc string
	rank int
}

// key is the entry's keys, as the bindings name them.
func (it footItem) key() string { return common.KeyNames(it.bs...) }

// on reports whether any of the entry's bindings is on.
func (it footItem) on() bool { return slices.ContainsFunc(it.bs, key.Binding.Enabled) }

// foot is a footer entry of one binding.
func foot(b key.Binding, desc string, rank int) footItem {
	return footItem{[]key.Binding{b}, desc, rank}
}

// footItems are the footer's keys in display order: the workshop's keys first, and the toggle
// of the lesson teaches (an engine toggle name, or "") in the place of the leasing key.
func (lk labKeys) footItems(teaches string) []footItem {
	k, wk, sel := lk.KeyMap, lk.workers, lk.workers.Select
	pace := footItem{[]key.Binding{k.Slower, k.Faster}, "pace", 4}
	switch {
	case k.finishing:
		return []footItem{foot(k.Finish, "stop", 0), foot(wk.Crash, "crash", 2), foot(k.Reset, "reset", 1),
			foot(k.NextScenario, "next", 3), foot(k.Help, "keys", 0), foot(k.Quit, "quit", 1)}
	case k.free:
		return []footItem{
			foot(k.Free, "stop free run", 0), foot(sel, "select", 3), foot(wk.Crash, "crash", 1),
			foot(wk.Restart, "restart", 1), foot(wk.Pause, "pause", 2), foot(k.PastLease, "expire", 1),
			foot(k.Clock, "clock", 2), pace, foot(k.Help, "keys", 0), foot(k.Quit, "quit", 3),
		}
	}
	t, ok := engine.LookupToggle(teaches)
	if !ok {
		t, _ = engine.LookupToggle(engine.ToggleLeasing)
	}
	teach, teachWord := k.toggleKey(t.Name), t.Short
	return []footItem{
		foot(k.Answer, "answer", 0), foot(k.Step, "step", 0), foot(sel, "select", 4), foot(wk.Crash, "crash", 1),
		foot(wk.Restart, "restart", 1), foot(wk.Pause, "pause", 3), foot(teach, teachWord, 1),
		foot(k.PastLease, "expire", 1), foot(k.Clock, "clock", 2), foot(k.Play, "play", 2),
		foot(k.Free, "free-run", 3), foot(k.Back, "back", 3), foot(k.Finish, "to the end", 4), foot(k.NextScenario, "next", 4),
		foot(k.Reset, "reset", 4), foot(k.Explain, "about", 4), foot(k.Help, "keys", 0), foot(k.Quit, "quit", 3),
	}
}

// toggleKey is the key of toggle name (an engine toggle name); a binding with no keys for a name
// the registry lacks.
func (k KeyMap) toggleKey(name string) key.Binding {
	for i, t := range engine.Registry() {
		if t.Name == name {
			return k.Toggles[i]
		}
	}
	return key.Binding{}
}

// helpPane is the footer and, after ?, the ? screen: the keys of the shell and of its panes
// that apply now, in their groups. The shell opens and closes it (an overlay).
type helpPane struct {
	keys    labKeys
	panes   paneSet       // the registered panes: a group each
	ask     question.Pane // an open question's keys come first
	teaches string        // the toggle the lesson teaches: its key in the footer
	st      *help.Styles
	open    bool // the ? screen, not the footer
}

// help is the help pane as the lab's state has it now.
func (m Model) help() helpPane {
	p := helpPane{keys: labKeys{m.keys, m.outbox.Keys, m.diagram.Keys, m.sql.Keys, m.workers.Keys()},
		panes: m.panes, ask: m.ask, st: &m.styles.Help, open: m.showHelp}
	if m.frame != nil {
		p.teaches = m.frame.Teaches
	}
	return p
}

// shortHelp is the footer in one line of at most w cells: as many keys as fit, the least
// needed dropped first, separated by " · " or, when that is too wide, by two spaces.
func (p helpPane) shortHelp(w int) string {
	items := p.footerItems()
	render := func(sep string, maxRank int) string {
		st := p.st
		var parts []string
		for _, it := range items {
			if it.rank <= maxRank && it.on() {
				parts = append(parts, st.ShortKey.Render(it.key())+" "+st.ShortDesc.Render(it.desc))
			}
		}
		return strings.Join(parts, st.ShortSeparator.Render(sep))
	}
	for _, sep := range []string{" · ", "  "} {
		for rank := 4; rank >= 0; rank-- {
			if s := render(sep, rank); common.Width(s) <= w {
				return s
			}
			if sep == " · " && rank == 2 {
				break // the workshop's keys come before the wider separator
			}
		}
	}
	return common.Cut(render("  ", 0), w)
}

// footerItems are the footer's entries now: the lab's keys and its registered panes'.
func (p helpPane) footerItems() []footItem {
	if q := p.ask.Open; q != nil { // every other key waits for the answer: only its keys act
		k := p.ask.Keys
		answer := k.Answer
		answer.SetHelp(strings.Join(k.Letters()[:len(q.Answers)], " "), "answer")
		return []footItem{foot(answer, "answer", 0), foot(k.Skip, "skip the question", 0), foot(k.Help, "keys", 0), foot(k.Quit, "quit", 1)}
	}
	items := p.keys.footItems(p.teaches)
	for _, p := range p.panes.ps {
		for _, b := range p.ShortHelp() {
			items = append(items, foot(b, b.Help().Desc, 4)) // a registered pane's, when there is room
		}
	}
	return items
}

// footerBindings are the bindings of the footer's entries now.
func (p helpPane) footerBindings() []key.Binding {
	var bs []key.Binding
	for _, it := range p.footerItems() {
		bs = append(bs, it.bs...)
	}
	return bs
}

// helpEntry is one entry of the ? screen: one key, or a few that belong together ("← →").
type helpEntry struct {
	bs   []key.Binding // shown when any of them is on; the key names are theirs
	desc string
	// off, when set, keeps the entry on the ? screen while its keys are off, with these words
	// after its own: when the keys act (a press of one says so too).
	off string
}

// one is the entry of a single binding, with its own help.
func one(b key.Binding) helpEntry { return helpEntry{bs: []key.Binding{b}, desc: b.Help().Desc} }

// shown reports whether the ? screen shows the entry: a key of it is on, or it says when.
func (e helpEntry) shown() bool { return e.off != "" || slices.ContainsFunc(e.bs, key.Binding.Enabled) }

// text is the entry's words on the ? screen now.
func (e helpEntry) text() string {
	if e.off != "" && !slices.ContainsFunc(e.bs, key.Binding.Enabled) {
		return e.desc + " (" + e.off + ")"
	}
	return e.desc
}

// helpGroup is one group of the ? screen, under a title.
type helpGroup struct {
	title   string
	entries []helpEntry
}

// helpGroups are the ? screen's groups. FullHelp is built from them, so every key the ? screen
// shows is a binding of the map.
func (lk labKeys) helpGroups() []helpGroup {
	k := lk.KeyMap
	return withDiagramKeys(lk.diagram, []helpGroup{
		{"step", []helpEntry{one(k.Step), one(lk.workers.Step), one(lk.workers.Select),
			{bs: []key.Binding{lk.workers.PrevWorker, lk.workers.NextWorker}, desc: "previous/next worker"}}},
		{"act", []helpEntry{one(lk.workers.Crash), one(lk.workers.Restart), one(lk.workers.Pause), one(k.Clock), one(k.PastLease)}},
		{"toggles", toggleEntries(k)},
		{"run", []helpEntry{one(k.Play), one(k.Free), one(k.Finish),
			{bs: []key.Binding{k.Slower, k.Faster}, desc: k.Slower.Help().Desc + "/" + k.Faster.Help().Desc},
			one(k.Reset), one(k.NextScenario), one(k.PrevScenario), one(k.OpenOffer), one(k.Explore)}},
		{"history", []helpEntry{one(k.Back), one(k.PrevMark), one(k.NextMark),
			{bs: []key.Binding{k.Answer}, desc: k.Answer.Help().Desc, off: "when the lab asks one"}}},
		{"screen", []helpEntry{
			{bs: lk.scroll.Bindings(), desc: "scroll the outbox"},
			one(k.Explain), one(lk.sql.Toggle), one(k.Transcript), one(k.Share), one(k.Close), one(k.Help), one(k.Quit)}},
	})
}

// toggleEntries are the toggles' keys on the ? screen, in the registry's order; the last that
// is on says when a flip applies.
func toggleEntries(k KeyMap) []helpEntry {
	var es []helpEntry
	last := 0
	for i, b := range k.Toggles {
		es = append(es, one(b))
		if b.Enabled() {
			last = i
		}
	}
	es[last].desc += " — each from the next action on"
	return es
}

// fullHelpLines is the ? screen at width w: each group of keys on its own line(s) under a title,
// flowed to the width, so that every key shows at 80 columns too. Keys that are off now are left
// out.
func (p helpPane) fullHelpLines(w int) []string {
	st := p.st
	if p.ask.Open != nil {
		return p.ask.HelpLines(st, w) // only the question's keys act now: the others wait
	}
	var lines []string
	for _, g := range append(p.keys.helpGroups(), p.panes.help()...) {
		var items []string
		for _, e := range g.entries {
			if e.shown() {
				items = append(items, st.FullKey.Render(helpKeys(e.bs))+" "+st.FullDesc.Render(e.text()))
			}
		}
		for i, t := range engine.Toggles() {
			if b := p.keys.Toggles[i]; g.title == "toggles" && t.RowLocks && !b.Enabled() {
				// Off on SQLite: the screen still names it, and where it works.
				items = append(items, st.FullKey.Render(common.KeyName(b))+" "+st.FullDesc.Render(t.Name+": a PostgreSQL lesson (--db postgres://…)"))
			}
		}
		if len(items) > 0 {
			lines = append(lines, common.Flow(common.Pad(g.title, 9), items, st.FullSeparator.Render(" · "), w)...)
		}
	}
	return lines
}

// helpKeys names an entry's keys on the ? screen: a single binding with all its keys
// ("space/n", "q/ctrl+c"), a group by each one's first ("← →").
func helpKeys(bs []key.Binding) string {
	if len(bs) == 1 {
		return bs[0].Help().Key
	}
	return common.KeyNames(bs...)
}

// view is the footer, or every key after ?, in w×h cells.
func (p helpPane) view(w, h int) []string {
	if h <= 0 {
		return nil
	}
	if p.open {
		lines := p.fullHelpLines(w)
		if n := len(lines) - h; n > 0 {
			// Too short a window for every key: the last line says how many are left out.
			lines = append(lines[:h-1], p.st.FullDesc.Render(fmt.Sprintf("+%d more %s: a taller window shows every key", n+1, common.Plural(n+1, "line"))))
		}
		return common.Box(lines, w, h)
	}
	return common.Box([]string{p.shortHelp(w)}, w, h)
}

// withDiagramKeys adds t and the diagram's scroll keys to the run group of the ? screen.
func withDiagramKeys(k diagram.Keys, groups []helpGroup) []helpGroup {
	for i := range groups {
		if groups[i].title == "run" {
			groups[i].entries = append(groups[i].entries, one(k.Toggle),
				helpEntry{bs: []key.Binding{k.Earlier, k.Later}, desc: "earlier/later in the diagram", off: "once " + common.KeyName(k.Toggle) + " shows it"})
		}
	}
	return groups
}
