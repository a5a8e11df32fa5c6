package ui

import (
	"context"
	"fmt"
	"slices"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
)

// maxQueuedSteps bounds the steps waiting behind a busy engine: a held-down space bar is
// coalesced beyond it. Other keys (a crash, a reset) always wait their turn.
const maxQueuedSteps = 16

// status is the line under the panes: what the last command did, or why it did nothing.
type status struct {
	text  string
	level level
}

// Model is the lab's Bubble Tea model. It holds the open session, the last frame read from it
// and the state of the screen; every engine call happens in a tea.Cmd it returns.
type Model struct {
	cfg    Config
	ctx    context.Context // ends when the lab ends; engine commands run under it
	gate   *gate
	runner *freeRunner // the free run, when the workers run on their own (g)
	after  afterFunc
	keys   KeyMap
	styles Styles

	width, height int // 0 until the first WindowSizeMsg
	layout        layout

	cycle   []string // scenarios in tab order
	target  string   // the scenario open, or being opened
	gen     int      // the session's generation: results for an older one are dropped
	sess    *engine.Session
	frame   *frame
	changes changes
	busy    bool // an engine command is in flight
	queue   []op // keys pressed meanwhile, in order
	steps   int  // steps that did something since the scenario opened
	start   runStart

	status   status
	play     player
	free     freeMode
	showHelp bool
	explain  explainMode
	quitting bool

	outbox  outboxPane
	workers workersPane
}

// New returns the lab's model. Its Init opens cfg.Start.
func New(ctx context.Context, cfg Config, st Styles) Model {
	m := Model{
		cfg: cfg, ctx: ctx, gate: &gate{}, runner: &freeRunner{}, after: realAfter,
		keys: DefaultKeyMap(), styles: st,
		target: cfg.Start, cycle: tabCycle(cfg.Start, cfg.Scenarios),
		gen: 1, busy: true, play: newPlayer(), free: newFreeMode(),
		status: status{text: "opening " + cfg.Start + " …"},
	}
	m.changes = noChanges(nil)
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
	if w := m.layout.width; !m.layout.tooSmall && m.layout.status != m.statusLines(w) {
		m.relayout()
	}
	return m, cmd
}

func (m Model) handle(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.relayout()
	case tea.KeyMsg:
		return m.key(msg)
	case openedMsg:
		return m.opened(msg)
	case resultMsg:
		return m.result(msg)
	case tickMsg:
		return m.tick(msg)
	case pollMsg:
		return m.pollTick(msg)
	}
	return m, nil
}

// key handles a key message. Fast typing (or tmux send-keys) can deliver several runes in one
// message: each counts as a press of its own.
func (m Model) key(k tea.KeyMsg) (Model, tea.Cmd) {
	if k.Paste || m.quitting {
		return m, nil
	}
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 {
		cmds := make([]tea.Cmd, 0, len(k.Runes))
		for _, r := range k.Runes {
			one := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}
			if r == ' ' {
				one.Type = tea.KeySpace
			}
			var cmd tea.Cmd
			m, cmd = m.key(one)
			cmds = append(cmds, cmd)
			if m.quitting {
				break
			}
		}
		return m, tea.Batch(cmds...)
	}
	return m.do(m.keys.match(k), k)
}

// do carries out one key's action.
func (m Model) do(act action, k tea.KeyMsg) (Model, tea.Cmd) {
	sel := m.workers.selected
	switch act {
	case actQuit:
		m.quitting = true
		m.play.stop()
		m.leaveFree()
		// Stop the free run (if any) before the program ends, in a tea.Cmd since Stop waits
		// for the workers; Run stops it again in case a run started meanwhile.
		r := m.runner
		return m, func() tea.Msg {
			_ = r.stop()
			return tea.QuitMsg{}
		}
	case actFree:
		if m.free.on {
			return m.stopFree()
		}
		return m.startFree()
	case actStep:
		return m.enqueue(op{kind: opNext})
	case actStepWorker:
		return m.enqueue(op{kind: opStepWorker, worker: sel})
	case actSelect:
		return m.selectWorker(int(k.Runes[0] - '1'))
	case actPrevWorker:
		return m.selectWorker(sel - 1)
	case actNextWorker:
		return m.selectWorker(sel + 1)
	case actCrash:
		return m.enqueue(op{kind: opCrash, worker: sel})
	case actRestart:
		return m.enqueue(op{kind: opRestart, worker: sel})
	case actPause:
		return m.enqueue(op{kind: opPause, worker: sel})
	case actLeasing:
		return m.enqueue(op{kind: opToggle, toggle: engine.ToggleLeasing})
	case actAtomicClaim:
		return m.enqueue(op{kind: opToggle, toggle: engine.ToggleAtomicClaim})
	case actOwnership:
		return m.enqueue(op{kind: opToggle, toggle: engine.ToggleOwnershipCheck})
	case actFencing:
		return m.enqueue(op{kind: opToggle, toggle: engine.ToggleFencing})
	case actHeartbeat:
		return m.enqueue(op{kind: opToggle, toggle: engine.ToggleHeartbeat})
	case actClock:
		return m.enqueue(op{kind: opClock})
	case actPastLease:
		return m.enqueue(op{kind: opPastLease})
	case actPlay:
		if m.play.playing {
			m.play.stop()
			m.status = status{text: "auto-play paused: space steps, p plays again"}
			return m, nil
		}
		cmd := m.play.start(m.after)
		m.status = status{text: fmt.Sprintf("auto-play: %s (< slower, > faster, p pauses)", m.play.rate())}
		return m, cmd
	case actSlower, actFaster:
		if m.free.on {
			return m.repace(act)
		}
		if act == actSlower {
			m.play.slower()
		} else {
			m.play.faster()
		}
		m.status = status{text: "auto-play speed: " + m.play.rate()}
		return m, nil
	case actReset:
		return m.reopen(m.target, "reset")
	case actNextScenario:
		return m.reopen(m.nextScenario(), "next scenario")
	case actUp, actDown, actPageUp, actPageDown, actTop, actBottom:
		m.outbox.scrollBy(act)
		return m, nil
	case actExplain:
		m.explain = m.explain.toggle(m.layout.caption > 0)
		m.relayout()
	case actHelp:
		m.showHelp = !m.showHelp
		m.relayout()
	}
	return m, nil
}

// selectWorker selects worker i, when there is one.
func (m Model) selectWorker(i int) (Model, tea.Cmd) {
	n := 0
	if m.frame != nil {
		n = len(m.frame.Workers)
	}
	if i < 0 || i >= n {
		m.status = status{text: fmt.Sprintf("no worker %d: this scenario has %d", i+1, n), level: levelWarn}
		return m, nil
	}
	m.workers.selected = i
	m.status = status{text: fmt.Sprintf("selected %s: s steps it, x crashes it, r restarts it", m.frame.Workers[i].Name)}
	return m, nil
}

// nextScenario is the scenario after the current one in tab order.
func (m Model) nextScenario() string {
	if len(m.cycle) == 0 {
		return m.target
	}
	i := slices.Index(m.cycle, m.target)
	return m.cycle[(i+1)%len(m.cycle)]
}

// reopen opens name on a fresh database (after the keys already waiting).
func (m Model) reopen(name, why string) (Model, tea.Cmd) {
	m.target = name
	m.play.stop()
	m.leaveFree() // the open command stops the workers before it opens
	m.status = status{text: fmt.Sprintf("%s: opening %s …", why, name)}
	return m.enqueue(op{kind: opOpen, name: name})
}
