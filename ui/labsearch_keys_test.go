package ui

import (
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"leaselab/ui/deadletters"
)

// The search's key probe (labsearch_test.go): in each distinct state, every key the lab knows
// and a few it does not is pressed on a copy of the model, whose commands are not run. A key
// acts (it returns work, or the screen changes) or says something in the status line; then:
//   - a key that acts is on the ? screen;
//   - a key on the ? screen acts or says why it does nothing;
//   - a key the ? screen lists twice has one meaning;
//   - while a question is open, a key that is not the question's does not end it, and the
//     footer names only the question's keys;
//   - X, V, A–D, { and } say why they do nothing, when they do nothing.

// strayKeys are keys the lab has no binding for.
var strayKeys = []string{"y", "Q", "~", "enter"}

// probeMark marks the status the probe sets (the status as it is, which lays out alike): a key
// that leaves it said nothing.
const probeMark = "\u200b"

// allBindings are the lab's bindings and its panes'.
func allBindings(m Model) []key.Binding {
	var bs []key.Binding
	for _, ck := range m.keys.commands() {
		bs = append(bs, ck.binding)
	}
	for _, ka := range m.keys.actions() {
		bs = append(bs, ka.binding)
	}
	ak, dk, wk, sk := m.ask.Keys, m.diagram.Keys, m.workers.Keys(), m.outbox.Keys
	bs = append(bs, ak.Answer, ak.Skip, dk.Toggle, dk.Earlier, dk.Later, wk.Select, wk.PrevWorker, wk.NextWorker, wk.Step, wk.Crash, wk.Restart, wk.Pause,
		sk.Up, sk.Down, sk.PageUp, sk.PageDown, sk.Top, sk.Bottom, m.sql.Keys.Toggle, m.sql.Keys.Close)
	for _, g := range m.panes.help() {
		for _, e := range g.entries {
			bs = append(bs, e.bs...)
		}
	}
	return bs
}

// keyUniverse is every key of every binding of the lab and its panes, and the stray ones.
func keyUniverse(m Model) []string {
	var keys []string
	add := func(bs ...key.Binding) {
		for _, b := range bs {
			for _, k := range b.Keys() {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	add(allBindings(m)...)
	add(slices.Concat(deadletters.New().FullHelp()...)...)
	// The worker keys past the first two act alike: 1, 2, and one past the last worker.
	keys = slices.DeleteFunc(keys, func(k string) bool { return len(k) == 1 && k >= "3" && k <= "9" })
	if m.frame != nil {
		keys = append(keys, strconv.Itoa(min(len(m.frame.Workers)+1, 9)))
	}
	for _, k := range strayKeys {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// listedKeys are the keys of the bindings the ? screen shows now, each with the words it gives
// them.
func listedKeys(m Model) map[string][]string {
	p := m.help()
	out := map[string][]string{}
	add := func(desc string, bs ...key.Binding) {
		for _, b := range bs {
			for _, k := range b.Keys() {
				if !slices.Contains(out[k], desc) {
					out[k] = append(out[k], desc)
				}
			}
		}
	}
	if p.ask.Open != nil {
		for _, b := range p.ask.Keys.FullHelp()[0] {
			add("question: "+b.Help().Desc, b)
		}
		return out // the ? screen names the question's keys alone
	}
	for _, g := range append(p.keys.helpGroups(), p.panes.help()...) {
		for _, e := range g.entries {
			if e.shown() {
				add(e.desc, e.bs...)
			}
		}
	}
	return out
}

// footerKeys are the keys of the footer's items now.
func footerKeys(m Model) []string {
	var keys []string
	for _, b := range m.help().footerBindings() {
		if b.Enabled() {
			keys = append(keys, b.Keys()...)
		}
	}
	return keys
}

// probeKey is what decides what the keys do: which bindings are on, a question, the selected
// worker's state, the history's ends, the explanation, the end of the run. The probe runs once
// per probeKey: the keys of two states alike in these act alike.
func probeKey(m Model) uint64 {
	h := fnv.New64a()
	for _, b := range allBindings(m) {
		fmt.Fprint(h, b2i(b.Enabled()))
	}
	sel := ""
	if f := m.frame; f != nil && m.workers.Selected() < len(f.Workers) {
		w := f.Workers[m.workers.Selected()]
		sel = fmt.Sprint(w.Crashed, w.Paused, w.Holding != "", f.Done, len(f.Workers), len(deadletters.DeadLettered(f)) > 0)
	}
	fmt.Fprintf(h, "|%v|%s|%v|%v|%v|%v|%v", m.ask.Open != nil, sel, m.track.Line.Pos > 0, m.track.Line.Pos < len(m.track.Line.Entries),
		m.layout.caption > 0, m.showHelp, m.status.Level)
	return h.Sum64()
}

// screenSig is what a key can change on screen without the engine.
func screenSig(m Model) string {
	return fmt.Sprintf("%v|%v|%v|%v|%d|%v|%v|%v|%v|%v|%v|%d", m.showHelp, m.caption.Mode, m.diagram.On, m.sql.Open,
		m.workers.Selected(), m.quitting, m.ask.Open == nil, m.play.Playing, m.free.on, m.finish.on,
		m.busy, len(m.queue))
}

// probeKeys presses every key on a copy of the lab's model.
func (s *searcher) probeKeys(l *lab, path []string) {
	base := l.m
	if base.busy {
		return
	}
	listed := listedKeys(base)
	footer := footerKeys(base)
	sig := screenSig(base)
	var silentOnHelp, unlisted, wrongLabel []string
	for _, k := range keyUniverse(base) {
		mm := base
		sentinel := base.status.Text + probeMark
		mm.status.Text = sentinel
		after, cmd := mm.update(searchKey(k))
		said := after.status.Text != sentinel && after.status.Text != ""
		// A scroll key acts by moving the table; a note of several lines may move it too, as
		// the layout makes room for it, which is no action of the key's.
		scrolled := after.outbox.Offset != base.outbox.Offset && !said
		acted := cmd != nil || screenSig(after) != sig || scrolled
		descs, onHelp := listed[k]
		switch {
		case acted && !onHelp && k != "ctrl+c":
			unlisted = append(unlisted, k)
		case onHelp && !acted && !said:
			silentOnHelp = append(silentOnHelp, k)
		case !acted && !said && strings.Contains("X V A B C D { }", k):
			silentOnHelp = append(silentOnHelp, k+" (off)")
		}
		if len(descs) > 1 && !(len(descs) == 2 && strings.HasPrefix(descs[0], "question: ")) {
			wrongLabel = append(wrongLabel, fmt.Sprintf("%s is on ? as %q", k, descs))
		}
		if base.ask.Open != nil && after.ask.Open == nil && !after.quitting && !questionKey(base, k) {
			wrongLabel = append(wrongLabel, fmt.Sprintf("%s ended the question, but it is not one of its keys", k))
		}
	}
	if base.ask.Open != nil {
		for _, k := range footer {
			if !questionKey(base, k) && k != "?" && k != "q" && k != "ctrl+c" {
				wrongLabel = append(wrongLabel, fmt.Sprintf("the footer names %s while only the question's keys act", k))
			}
		}
	}
	v := ansi_(l)
	if len(unlisted) > 0 {
		s.violate(kindKeys, path, "any", fmt.Sprintf("keys act but the ? screen does not list them: %s", strings.Join(unlisted, " ")), v)
	}
	if len(silentOnHelp) > 0 {
		s.violate(kindKeys, path, "any", fmt.Sprintf("keys do nothing and say nothing: %s", strings.Join(silentOnHelp, " ")), v)
	}
	for _, w := range wrongLabel {
		s.violate(kindKeys, path, "any", "a key does other than its label: "+w, v)
	}
}

// questionKey reports whether k is one of the open question's keys (an answer, skip).
func questionKey(m Model, k string) bool {
	ak := m.ask.Keys
	return slices.Contains(ak.Answer.Keys(), k) || slices.Contains(ak.Skip.Keys(), k)
}

// ansi_ is the lab's screen, for a violation's report.
func ansi_(l *lab) string { return l.view() }

// envSet reports whether the environment variable name is set to something.
func envSet(name string) bool { return os.Getenv(name) != "" }
