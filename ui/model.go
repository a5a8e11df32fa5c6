package ui

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/caption"
	"leaselab/ui/common"
	"leaselab/ui/diagram"
	"leaselab/ui/history"
	"leaselab/ui/outbox"
	"leaselab/ui/pace"
	"leaselab/ui/question"
	"leaselab/ui/sqlpane"
	"leaselab/ui/workers"
)

// maxQueuedSteps bounds the steps waiting behind a busy engine: a held-down space bar is
// coalesced beyond it. Other keys (a crash, a reset) always wait their turn.
const maxQueuedSteps = 16

// Model is the lab's Bubble Tea model. It holds the open session, the last frame read from it
// and the state of the screen; every engine call happens in a tea.Cmd it returns.
type Model struct {
	cfg    Config
	ctx    context.Context // ends when the lab ends; engine commands run under it
	gate   *gate
	runner *freeRunner // the free run, when the workers run on their own (g)
	after  pace.After
	now    func() time.Time // the wall clock, for how long e took
	keys   KeyMap
	styles common.Styles

	width, height int // 0 until the first WindowSizeMsg
	layout        layout
	replay        []engine.Command // Config.Replay, until the first scenario has opened (share.go)

	cycle   []string // scenarios in tab order
	target  string   // the scenario open, or being opened
	gen     int      // the session's generation: results for an older one are dropped
	sess    *engine.Session
	frame   *common.Frame
	changes common.Changes
	busy    bool // an engine command is in flight
	queue   []op // keys pressed meanwhile, in order

	status   common.Status
	play     pace.Player // auto-play (p)
	free     freeMode
	finish   finishMode
	showHelp bool
	caption  caption.Pane // the scenario's explanation (i)
	diagram  diagram.Pane // the space-time diagram (t), shown instead of the panes
	quitting bool

	outbox  outbox.Pane
	workers workers.Pane
	sql     sqlpane.Pane // the SQL pane (v), over the others

	panes paneSet // the registered panes (panes.go), below the built-in ones

	track history.Track // the moves made on the session, to go back to any (ui/history)
	ask   question.Pane // the question the script asks before its next step (ui/question)

	exploring *exploring // the explore key's search, or the violation it found (explore.go)
}

// New returns the lab's model. Its Init opens cfg.Start.
func New(ctx context.Context, cfg Config, st common.Styles) Model {
	m := Model{
		cfg: cfg, ctx: ctx, gate: &gate{}, runner: &freeRunner{room: cfg.Room}, after: pace.RealAfter, now: time.Now,
		keys: DefaultKeyMap(), styles: st, outbox: outbox.New(), workers: workers.New(), diagram: diagram.New(), sql: sqlpane.New(DefaultKeyMap().Step), panes: panesOf(registry(), true),
		target: cfg.Start, cycle: tabCycle(cfg.Start, cfg.Scenarios),
		gen: 1, busy: true, play: pace.NewPlayer(), free: newFreeMode(),
		status: common.Status{Text: "opening " + cfg.Start + " …"}, ask: question.New(DefaultKeyMap().Help, DefaultKeyMap().Quit), caption: caption.New(DefaultKeyMap().Explain),
	}
	m.changes = common.NoChanges(nil)
	m.keys.Explore.SetEnabled(cfg.Explore != nil)
	m.keys.Share.SetEnabled(cfg.Share != nil)
	m.replay = cfg.Replay // made once, on the first scenario opened
	m.relayout()
	return m
}

// tabCycle is the order tab goes through: the built-in scenarios, after the start scenario when
// that is a file of the user's.
func tabCycle(start string, names []string) []string {
	if slices.Contains(names, start) || start == "" {
		return names
	}
	return append([]string{start}, names...)
}

// Init opens the first scenario.
func (m Model) Init() tea.Cmd { return m.openCmd(m.target, m.gen) }

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) { return m.update(msg) }

func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	m, cmd := m.handle(msg)
	// A long status note takes a second line: lay out again when it changes its height.
	if w, sl := m.layout.width, m.statusLine(); !m.layout.tooSmall && (m.layout.status != sl.Lines(w) || m.layout.note != sl.NoteLines(w)) {
		m.relayout()
	}
	// esc closes what covers the screen: the ? screen, or the explanation (shown by i, or on its
	// own when there are lines to spare).
	m.keys.setOverlay(m.showHelp || m.layout.caption > 0 || m.sql.Open)
	return m, cmd
}

func (m Model) handle(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		var fitted bool
		m.width, m.height, fitted = FitWindow(msg.Width, msg.Height) // a View of the size asked for could be gigabytes
		if fitted {
			m.status = common.Status{Text: oversizeNote(msg.Width, msg.Height), Level: common.LevelWarn}
		}
		m.relayout()
	case OversizeMsg:
		m.status = common.Status{Text: oversizeNote(msg.Width, msg.Height), Level: common.LevelWarn}
	case tea.KeyMsg:
		return m.key(msg)
	case openedMsg:
		return m.opened(msg)
	case sharedMsg:
		return m.shared(msg), nil
	case resultMsg:
		return m.result(msg)
	case pace.TickMsg:
		return m.tick(msg)
	case pollMsg:
		return m.pollTick(msg)
	case transcriptMsg:
		m.status = msg.note(m.cfg.Served)
	case exploreProgressMsg, exploreDoneMsg:
		var st *common.Status
		var cmd tea.Cmd
		if m.exploring, st, cmd = m.exploring.took(msg, m.keys); st != nil {
			m.status = *st
		}
		return m, cmd
	default: // a message of a registered pane's own
		var outs []tea.Msg
		m.panes, outs = m.panes.broadcast(msg, m.scene())
		return takeAll(m, outs, Model.take)
	}
	return m, nil
}

// take carries out what a registered pane asked for.
func (m Model) take(out tea.Msg) (Model, tea.Cmd) {
	switch out := out.(type) {
	case common.DoMsg:
		return m.enqueue(op{cmd: out.Cmd})
	case question.AnswerMsg:
		return m.enqueue(op{cmd: engine.CmdNext{}, answered: true, answer: out.Answer})
	case common.StepOffMsg:
		m.status = common.Status{Text: m.keys.whyOffCommand(engine.CmdNext{}, m.sess == nil && !m.busy, m.sess != nil), Level: common.LevelWarn}
		return m, nil
	case common.NeedsSessionMsg:
		if m.sess == nil && !m.busy {
			m.status = common.Status{Text: noSession(m.keys), Level: common.LevelWarn}
		}
		return m, nil
	}
	return m, takeNote(out, &m.status)
}

// key handles a key message. Fast typing (or tmux send-keys) can deliver several runes in one
// message: each counts as a press of its own.
func (m Model) key(k tea.KeyMsg) (Model, tea.Cmd) {
	if k.Paste || m.quitting {
		return m, nil
	}
	if mm, cmd, ok := pressEach(m, k, Model.key, func(m Model) bool { return m.quitting }); ok {
		return mm, cmd
	}
	if k.Type == tea.KeyEsc && m.exploring != nil && m.exploring.cancel != nil && !m.showHelp {
		m.exploring.cancel() // esc cancels the explore key's search first
		m.status = common.Status{Text: "explore: cancelling …"}
		return m, nil
	}
	if m.ask.Open != nil {
		switch {
		case k.Type == tea.KeyEsc && m.showHelp:
			return m.do(actClose, k) // esc closes the ? screen over the question first
		case key.Matches(k, m.ask.Keys.Quit):
			return m.do(actQuit, k) // q and ? are the lab's while a question is open too
		case key.Matches(k, m.ask.Keys.Help):
			return m.do(actHelp, k)
		}
		var out tea.Msg
		m.ask, out = m.ask.Update(k, m.scene())
		m.keys.Answer.SetEnabled(m.ask.Open != nil)
		return m.take(out)
	}
	if p, ok := m.sql.Update(k, m.scene()); ok {
		m.sql = p
		return m, nil
	}
	if p, cmd, ok := m.outbox.Update(k); ok {
		if p.Offset == m.outbox.Offset {
			m.status = common.Status{Text: p.AtEdge(), Level: common.LevelWarn} // a scroll key at the end says so
		}
		m.outbox = p
		return m, cmd
	}
	if p, out, ok := m.workers.Update(k, m.scene()); ok {
		m.workers = p
		return m.take(out)
	}
	if p, out, ok := m.diagram.Update(k, m.scene()); ok {
		m.diagram = p
		return m.take(out)
	}
	if set, out, ok := m.panes.key(k, m.scene()); ok {
		m.panes = set
		return m.take(out)
	}
	if c, on, ok := m.keys.command(k); ok {
		if !on {
			if why := m.keys.whyOffCommand(c, m.sess == nil && !m.busy, m.sess != nil); why != "" {
				m.status = common.Status{Text: why, Level: common.LevelWarn}
			}
			return m, nil
		}
		return m.enqueue(op{cmd: c})
	}
	act, on := m.keys.match(k)
	if !on {
		if why := m.keys.whyOff(act, m.sess == nil && !m.busy, m.target); why != "" {
			m.status = common.Status{Text: why, Level: common.LevelWarn}
		}
		return m, nil
	}
	return m.do(act, k)
}

// scene is what the panes draw from now.
func (m Model) scene() common.Scene {
	return common.Scene{Frame: m.frame, Changes: m.changes, Styles: &m.styles}
}

// otherScenario is the scenario d places after target in the tab order cycle (-1: the one
// before it).
func otherScenario(cycle []string, target string, d int) string {
	n := len(cycle)
	if n == 0 {
		return target
	}
	i := max(slices.Index(cycle, target), 0)
	return cycle[((i+d)%n+n)%n]
}

// reopen opens name on a fresh database (after the keys already waiting).
func (m Model) reopen(name, why string) (Model, tea.Cmd) {
	m.target = name
	m.play.Stop()
	m.stopFinish()
	m.leaveFree() // the open command stops the workers before it opens
	m.status = common.Status{Text: fmt.Sprintf("%s: opening %s …", why, name)}
	return m.enqueue(op{kind: opOpen, name: name})
}
