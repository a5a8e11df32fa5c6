// Package workers is the workers pane: a line per worker, the selection, and the keys that act
// on the selected worker (s x r z), for which it builds the engine command.
package workers

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Pane is one line per worker: its state, what it holds in memory, its counts. The
// selected worker (the one s, x, r and z act on) is marked ▸; the pane's own keys select it.
type Pane struct {
	keys     Keys
	selected int
	hint     string // the keys that select a worker, as the pane's title names them: "1–2 or ← →"
}

// New returns the pane, the first worker selected.
func New() Pane { return Pane{keys: DefaultKeys()} }

// Selected is the worker the act keys act on.
func (p Pane) Selected() int { return p.selected }

// WithSelected is the pane with worker i selected.
func (p Pane) WithSelected(i int) Pane { p.selected = i; return p }

// Keys are the pane's keys, as they are now (on or off).
func (p Pane) Keys() Keys { return p.keys }

// ShortHelp is the pane's keys (help.KeyMap).
func (p Pane) ShortHelp() []key.Binding { return []key.Binding{p.keys.Select} }

// FullHelp is the pane's keys (help.KeyMap).
func (p Pane) FullHelp() [][]key.Binding {
	return [][]key.Binding{{p.keys.Select, p.keys.PrevWorker, p.keys.NextWorker}}
}

// Opened adjusts the pane to a session that opened (ok) or did not, with n workers.
func (p *Pane) Opened(ok bool, n int) {
	p.keys.setEnabled(ok)
	if ok {
		p.selected = min(p.selected, max(0, n-1))
		p.keys.setWorkers(n)
		p.hint = p.keys.hint()
	}
}

// Update takes the pane's keys: 1–9 select a worker, ← and → the one before or after (round
// the end); s, x, r and z ask the shell to step, crash, restart or pause the selected worker
// (a common.DoMsg with the command). ok is false for any other key; out is a NoteMsg, a DoMsg,
// a StepOffMsg for s while it is off, or a NeedsSessionMsg for a key that is off because no
// scenario is open.
func (p Pane) Update(msg tea.Msg, s common.Scene) (_ Pane, out tea.Msg, ok bool) {
	k, isKey := msg.(tea.KeyMsg)
	n := 0
	if s.Frame != nil {
		n = len(s.Frame.Workers)
	}
	if c, ok := p.act(k); isKey && ok {
		return p, common.DoMsg{Cmd: c}, true
	}
	switch {
	case !isKey:
		return p, nil, false
	case key.Matches(k, p.keys.Select):
		return p.selectWorker(int(k.Runes[0]-'1'), s)
	case key.Matches(k, p.keys.PrevWorker, p.keys.NextWorker):
		// ← on the first worker goes round to the last, → on the last to the first.
		n, d := max(1, n), 1
		if key.Matches(k, p.keys.PrevWorker) {
			d = n - 1
		}
		return p.selectWorker((p.selected+d)%n, s)
	case common.HasKey(k, p.keys.Step) && p.keys.Select.Enabled():
		return p, common.StepOffMsg{}, true
	case common.HasKey(k, p.keys.Select, p.keys.PrevWorker, p.keys.NextWorker, p.keys.Step, p.keys.Crash, p.keys.Restart, p.keys.Pause):
		return p, common.NeedsSessionMsg{}, true
	}
	return p, nil, false
}

// acts are the keys of the selected worker, each with the engine command it asks for: the
// worker travels with the command, so the shell's runner does it as any other.
func (p Pane) acts() []workerAct {
	return []workerAct{
		{p.keys.Step, func(w int) engine.Command { return engine.CmdStepWorker{Worker: w} }},
		{p.keys.Crash, func(w int) engine.Command { return engine.CmdCrash{Worker: w} }},
		{p.keys.Restart, func(w int) engine.Command { return engine.CmdRestart{Worker: w} }},
		{p.keys.Pause, func(w int) engine.Command { return engine.CmdPause{Worker: w} }},
	}
}

// workerAct is a key of the selected worker and the command it builds.
type workerAct struct {
	b   key.Binding
	cmd func(worker int) engine.Command
}

// act is the command of the enabled act key k matches; ok is false when none does.
func (p Pane) act(k tea.KeyMsg) (_ engine.Command, ok bool) {
	for _, a := range p.acts() {
		if key.Matches(k, a.b) {
			return a.cmd(p.selected), true
		}
	}
	return nil, false
}

// SetBusy switches the step key off while the workers run on their own or e runs to the end.
func (p *Pane) SetBusy(busy bool) { p.keys.setBusy(busy) }

// selectWorker selects worker i, when there is one.
func (p Pane) selectWorker(i int, s common.Scene) (_ Pane, out tea.Msg, ok bool) {
	n := 0
	if s.Frame != nil {
		n = len(s.Frame.Workers)
	}
	if i < 0 || i >= n {
		return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("no worker %d: this scenario has %d", i+1, n), Level: common.LevelWarn}}, true
	}
	p.selected = i
	return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("selected %s: %s steps it, %s crashes it, %s restarts it", s.Frame.Workers[i].Name,
		common.KeyName(p.keys.Step), common.KeyName(p.keys.Crash), common.KeyName(p.keys.Restart))}}, true
}

// Lines renders the title (when asked for) and the workers that fit in n lines; when not all
// fit, the window follows the selected worker.
func (p Pane) Lines(f *common.Frame, ch common.Changes, st *common.Styles, w int, title bool, n int) []string {
	h := n
	if title {
		h++
	}
	if h <= 0 {
		return nil
	}
	if f == nil {
		return common.Box([]string{st.Section.Render(common.Rule("Workers", w))}, w, h)
	}
	show := n
	n = len(f.Workers)
	var lines []string
	if title {
		head := fmt.Sprintf("Workers: %d, each on its own connection (▸ selected: %s)", n, p.hint)
		if n > 0 && p.selected < n {
			head = fmt.Sprintf("Workers (▸ %s selected; %s select)", f.Workers[p.selected].Name, p.hint)
		}
		lines = append(lines, st.Section.Render(common.Rule(head, w)))
	}
	// Too few lines for every worker: the last says how many are left out, and how to see them.
	more, oneLine := "", show == 1
	if n > show && show > 0 {
		if !oneLine {
			show--
		}
		more = fmt.Sprintf("+%d more (%s select)", n-show, p.hint)
	}
	first := 0
	if n > show && show > 0 {
		first = max(0, min(p.selected-show/2, n-show))
	}
	cw := cellWidths{compact: w < 100, w: w}
	for _, v := range f.Workers {
		cw.name = max(cw.name, common.Width(v.Name))
		cw.state = max(cw.state, common.Width(v.State))
		cw.hold = max(cw.hold, common.Width(holding(v, cw.compact)))
	}
	cw.state, cw.hold = min(cw.state, 26), min(cw.hold, 32)
	// One format for every line of the table: the short counts for all when the long ones of
	// any worker do not fit.
	cw.short = cw.compact
	for i := 0; i < n && i < len(f.Ledgers) && !cw.short; i++ {
		used := 4 + cw.name + 1 + cw.state + 2 + cw.hold + 2
		cw.short = used+common.Width(counts(f.Ledgers[i], false)) > cw.w
	}
	for i := first; i < n && i < first+show; i++ {
		lines = append(lines, p.line(f, i, ch.Workers[i], st, cw))
	}
	switch {
	case more == "":
	case oneLine && len(lines) > 0: // one line: the selected worker's, with the count after it
		last := len(lines) - 1
		lines[last] = common.Cut(lines[last], max(0, w-common.Width(more)-2)) + "  " + st.Subtle.Render(more)
	default:
		lines = append(lines, "  "+st.Subtle.Render(more))
	}
	return common.Box(lines, w, h)
}

// cellWidths are the widths of a worker line's columns, the same for every worker.
type cellWidths struct {
	name, state, hold int
	w                 int  // the whole line
	compact           bool // narrow: shorter words
	short             bool // the counts in their short form, on every line
}

// line renders worker i.
func (p Pane) line(f *common.Frame, i int, changed bool, st *common.Styles, cw cellWidths) string {
	v := f.Workers[i]
	var b strings.Builder
	switch {
	case i == p.selected:
		b.WriteString("▸")
	default:
		b.WriteString(" ")
	}
	if changed {
		b.WriteString("•")
	} else {
		b.WriteString(" ")
	}
	num := fmt.Sprintf("%d ", i+1)
	if i >= 9 {
		num = "  "
	}
	b.WriteString(num)
	name := st.Worker(i).Render(v.Name)
	if i == p.selected {
		// Bold and underlined in the worker's colour, with what the theme adds (the projector's
		// reverse video).
		name = st.Worker(i).Bold(true).Underline(true).Inherit(st.Selected).Render(v.Name)
	}
	b.WriteString(name + common.Spaces(cw.name-common.Width(v.Name)) + " ")
	state := common.Pad(v.State, cw.state)
	switch {
	case v.Crashed:
		state = st.Crashed.Render(v.State) + common.Spaces(cw.state-common.Width(v.State))
	case v.Paused:
		state = st.Warn.Render(common.Pad(v.State, cw.state))
	case changed:
		state = st.Changed.Render(v.State) + common.Spaces(cw.state-common.Width(v.State))
	}
	b.WriteString(state + "  ")
	b.WriteString(st.Subtle.Render(common.Pad(holding(v, cw.compact), cw.hold)) + "  ")
	// The counts take what is left (their form is the table's: cw.short).
	b.WriteString(counts(f.Ledgers[i], cw.short))
	return b.String()
}

// holding says what the worker holds in memory: the message in progress and its lease version,
// or the rows it loaded without a claim.
func holding(v engine.WorkerView, compact bool) string {
	more := ""
	switch {
	case v.Queue > 0 && compact:
		more = fmt.Sprintf(" +%d", v.Queue)
	case v.Queue > 0:
		more = fmt.Sprintf(" +%d more", v.Queue)
	}
	switch {
	case v.Crashed:
		return "memory lost"
	case v.Holding != "" && v.HoldingVersion > 0 && compact:
		return fmt.Sprintf("holds %s v%d%s", v.Holding, v.HoldingVersion, more)
	case v.Holding != "" && v.HoldingVersion > 0:
		return fmt.Sprintf("holds %s (lease v%d)%s", v.Holding, v.HoldingVersion, more)
	case v.Holding != "" && compact:
		return "holds " + v.Holding + more
	case v.Holding != "":
		return "holds " + v.Holding + more + ", no lease"
	case v.Queue > 0:
		return fmt.Sprintf("%d loaded, no lease", v.Queue)
	}
	return "holds nothing"
}

// counts is a worker's ledger in a few words (fewer when compact).
func counts(l engine.WorkerLedger, compact bool) string {
	if compact {
		s := fmt.Sprintf("won %d proc %d fin %d", l.ClaimsWon, l.ProcessingAttempts, l.Finalized)
		if l.Loads > 0 {
			s = fmt.Sprintf("loaded %d ", l.RowsLoaded) + s
		}
		if l.ClaimsBlocked > 0 {
			s += fmt.Sprintf(" blk %d", l.ClaimsBlocked)
		}
		if l.ClaimsBackoff > 0 {
			s += fmt.Sprintf(" wait %d", l.ClaimsBackoff)
		}
		if l.OwnershipViolations > 0 {
			s += fmt.Sprintf(" VIOL %d", l.OwnershipViolations)
		}
		return s
	}
	// The counts that are always there, and those that are there once they are not 0.
	var parts []string
	for _, c := range []struct {
		word string
		n    int
		show bool
	}{
		{"loaded", l.RowsLoaded, l.Loads > 0}, {"won", l.ClaimsWon, true}, {"blocked", l.ClaimsBlocked, l.ClaimsBlocked > 0},
		{"waited (backoff)", l.ClaimsBackoff, l.ClaimsBackoff > 0}, {"reclaimed", l.Reclaims, l.Reclaims > 0},
		{"processed", l.ProcessingAttempts, true}, {"finalized", l.Finalized, true},
		{"rejected", l.RejectedFinalizes, l.RejectedFinalizes > 0},
		{"VIOLATIONS", l.OwnershipViolations, l.OwnershipViolations > 0}, {"crashes", l.Crashes, l.Crashes > 0},
	} {
		if c.show {
			parts = append(parts, fmt.Sprintf("%s %d", c.word, c.n))
		}
	}
	return strings.Join(parts, " · ")
}
