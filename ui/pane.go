package ui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/ui/common"
)

// The lab and the watch are shells around panes. A pane is a component, most in a package of
// its own (ui/outbox, ui/workers, ui/ledgers, ui/checks, ui/events, ui/sqlpane, ui/diagram,
// ui/header, ui/rescuer, ui/deadletters; the contract in ui/common): it keeps its state, matches
// its own keys (a help.KeyMap of key.Bindings), is sized by the shell's layout and draws itself
// from the screen's shared read model (common.Scene). The shell keeps the layout, the status
// line, the overlays and the runner that serialises engine commands (queue.go).
//
// The built-in panes have concrete types that the shell's layout sizes (layout.go) and its
// slots place (view.go). A new pane implements common.Pane and is registered in panes.go, with
// the slot it stands after: the shell then routes its keys to it, puts its keys on the ? screen
// and gives it lines of its own (see docs/architecture.md).

// paneSpec is one registered pane: its name (the title of its group on the ? screen), a new
// one, the shells that show it, and the slot of the lab it stands after (view.go; none: after
// the events). The watch shows its panes under its table.
type paneSpec struct {
	name       string
	new        func() common.Pane
	lab, watch bool
	after      slotName
}

// paneSet is the registered panes a shell shows, with the height the layout gave each. It is a
// value: every change copies the slices it changes.
type paneSet struct {
	names []string
	after []slotName // the slot each stands after (paneSpec.after)
	ps    []common.Pane
	hs    []int
}

// panesOf are the registered panes that a shell shows, new: the lab's (inLab) or the watch's.
func panesOf(specs []paneSpec, inLab bool) paneSet {
	var set paneSet
	for _, sp := range specs {
		if (inLab && sp.lab) || (!inLab && sp.watch) {
			set.names, set.ps = append(set.names, sp.name), append(set.ps, sp.new())
			set.after = append(set.after, cmp.Or(sp.after, slotEvents))
		}
	}
	set.hs = make([]int, len(set.ps))
	return set
}

// key gives k to the first pane one of whose enabled bindings matches it; ok is false when
// none does. A key of a pane that says why its keys are off (common.OffKeys) says it.
func (set paneSet) key(k tea.KeyMsg, s common.Scene) (_ paneSet, out tea.Msg, ok bool) {
	for i, p := range set.ps {
		if key.Matches(k, slices.Concat(p.FullHelp()...)...) {
			set.ps = slices.Clone(set.ps)
			set.ps[i], out = p.Update(k, s)
			return set, out, true
		}
	}
	for _, p := range set.ps {
		off, ok := p.(common.OffKeys)
		if !ok {
			continue
		}
		for _, b := range slices.Concat(p.FullHelp()...) {
			if !b.Enabled() && slices.Contains(b.Keys(), k.String()) {
				return set, common.NoteMsg{Status: common.Status{Text: common.KeyName(b) + " " + b.Help().Desc + ": " + off.WhyOff(b), Level: common.LevelWarn}}, true
			}
		}
	}
	return set, nil, false
}

// broadcast gives msg, a message the shell does not know, to every pane.
func (set paneSet) broadcast(msg tea.Msg, s common.Scene) (_ paneSet, outs []tea.Msg) {
	if len(set.ps) == 0 {
		return set, nil
	}
	set.ps = slices.Clone(set.ps)
	for i, p := range set.ps {
		var out tea.Msg
		if set.ps[i], out = p.Update(msg, s); out != nil {
			outs = append(outs, out)
		}
	}
	return set, outs
}

// wants are the lines each pane would take at width w.
func (set paneSet) wants(s common.Scene, w int) []int {
	wants := make([]int, len(set.ps))
	for i, p := range set.ps {
		wants[i] = p.Want(s, w)
	}
	return wants
}

// pinned says, for each pane, whether it is pinned now (common.Pinner).
func (set paneSet) pinned(s common.Scene) []bool {
	out := make([]bool, len(set.ps))
	for i, p := range set.ps {
		if pp, ok := p.(common.Pinner); ok {
			out[i] = pp.Pinned(s)
		}
	}
	return out
}

// setSizes gives the panes width w and the heights hs; a pane past the end of hs gets no
// lines (a screen too small for any pane has none).
func (set paneSet) setSizes(w int, hs []int) paneSet {
	if len(set.ps) == 0 {
		return set
	}
	set.ps, set.hs = slices.Clone(set.ps), make([]int, len(set.ps))
	for i := range set.ps {
		if i < len(hs) {
			set.hs[i] = hs[i]
		}
		set.ps[i] = set.ps[i].SetSize(w, set.hs[i])
	}
	return set
}

// view is the panes' lines, each pane exactly its height, w cells wide at most.
func (set paneSet) view(s common.Scene, w int) []string {
	var lines []string
	for i, p := range set.ps {
		lines = append(lines, paneLines(p.View(s), w, set.hs[i])...)
	}
	return lines
}

// viewAfter is the lines of the panes that stand after slot name (view.go), each exactly its
// height, w cells wide at most.
func (set paneSet) viewAfter(name slotName, s common.Scene, w int) []string {
	var lines []string
	for i, p := range set.ps {
		if set.after[i] == name {
			lines = append(lines, paneLines(p.View(s), w, set.hs[i])...)
		}
	}
	return lines
}

// help is the panes' keys on a ? screen: a group per pane that has keys, under its name.
func (set paneSet) help() []helpGroup {
	var gs []helpGroup
	for i, p := range set.ps {
		if len(slices.Concat(p.FullHelp()...)) == 0 {
			continue // a pane without keys has no group
		}
		g := helpGroup{title: set.names[i]}
		for _, b := range slices.Concat(p.FullHelp()...) {
			e := one(b)
			if off, ok := p.(common.OffKeys); ok {
				e.off = off.WhyOff(b)
			}
			g.entries = append(g.entries, e)
		}
		gs = append(gs, g)
	}
	return gs
}

// takeNote carries out the asks every shell takes alike: a NoteMsg goes to *st, a CmdMsg's
// command is returned.
func takeNote(out tea.Msg, st *common.Status) tea.Cmd {
	switch out := out.(type) {
	case common.NoteMsg:
		*st = out.Status
	case common.CmdMsg:
		return out.Cmd
	}
	return nil
}

// takeAll has a shell take what its panes asked for (outs), in turn.
func takeAll[M any](m M, outs []tea.Msg, take func(M, tea.Msg) (M, tea.Cmd)) (M, tea.Cmd) {
	cmds := make([]tea.Cmd, 0, len(outs))
	for _, out := range outs {
		var cmd tea.Cmd
		m, cmd = take(m, out)
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

// paneLines splits a pane's view into its h lines of at most w cells; none when the pane has
// no lines.
func paneLines(view string, w, h int) []string {
	if h <= 0 {
		return nil
	}
	return common.Box(strings.Split(view, "\n"), w, h)
}
