package ui

import (
	"context"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/history"
	"leaselab/ui/pace"
	"leaselab/ui/verdict"
)

// A Session is not safe for two engine commands at once, so they run one at a time: a key
// pressed while one is in flight waits in m.queue and runs when the result arrives.

// enqueue runs o now, or queues it behind the command in flight.
func (m Model) enqueue(o op) (Model, tea.Cmd) {
	if !m.busy {
		return m.dispatch(o)
	}
	if o.isStep() && stepsIn(m.queue) >= maxQueuedSteps {
		m.status = common.Status{Text: fmt.Sprintf("busy: %d steps are already waiting; this one is skipped", maxQueuedSteps), Level: common.LevelWarn}
		return m, nil
	}
	m.queue = append(m.queue, o)
	return m, nil
}

// stepsIn is how many of the commands waiting in q are steps.
func stepsIn(q []op) int {
	n := 0
	for _, o := range q {
		if o.isStep() {
			n++
		}
	}
	return n
}

// dispatch starts o. The model must not be busy.
func (m Model) dispatch(o op) (Model, tea.Cmd) {
	if o.kind == opOpen {
		m.gen++
		m.busy = true
		return m, m.openCmd(o.name, m.gen)
	}
	if m.sess == nil {
		m.status = common.Status{Text: noSession(m.keys), Level: common.LevelWarn}
		return m, nil
	}
	m.busy = true
	return m, m.opCmd(o)
}

// drain starts the next queued command, if any.
func (m Model) drain() (Model, tea.Cmd) {
	for !m.busy && len(m.queue) > 0 {
		o := m.queue[0]
		m.queue = m.queue[1:]
		var cmd tea.Cmd
		if m, cmd = m.dispatch(o); cmd != nil {
			return m, cmd
		}
	}
	return m, nil
}

// opCmd runs o on the current session and reads the frame back.
func (m Model) opCmd(o op) tea.Cmd {
	ctx, sess, gen, g, r, k, now, h := m.ctx, m.sess, m.gen, m.gate, m.runner, m.keys, m.now, m.track.H
	room, cost := m.cfg.Room, pollCost(m.frame)
	return func() tea.Msg {
		if !g.enter() {
			return nil
		}
		defer g.leave()
		switch {
		case room == nil:
		case o.kind == opPoll:
			// A free run's screen waits its turn like its workers.
			if room.Admit(ctx, cost) != nil {
				return nil
			}
		default:
			defer room.Interactive()()
		}
		var (
			fin     finishResult
			hx      histResult
			note    string
			lvl     common.Level
			handled bool // a free-run op, done by applyFree
			acted   bool
		)
		if o.kind != opCommand { // a key's command goes straight to the history and the engine
			note, lvl, handled = applyFree(ctx, sess, r, o, k)
		}
		switch {
		case o.kind == opFinish:
			fin, note, lvl = finishRecorded(ctx, sess, h, now)
		case handled && o.kind == opFreeStart:
			recordFree(h, sess, &note)
		case o.kind == opReplay:
			note, lvl = replayCode(ctx, sess, h, o.moves, k)
		case !handled:
			note, lvl, acted, hx = applyHistory(ctx, sess, h, o, k, now)
			if hx.sess != nil {
				sess = hx.sess // rebuilt: the old session is closed
			}
		}
		if !hx.timeline.Valid {
			hx.timeline = history.Of(h) // e and g record moves too
		}
		f, err := common.Capture(ctx, sess)
		if err != nil {
			return resultMsg{gen: gen, op: o, note: "error: " + err.Error(), level: common.LevelError, hist: hx}
		}
		if o.isStep() && !acted && note == "" {
			note, lvl = whyNothing(f, k), common.LevelWarn
			if f.Done {
				lvl = common.LevelInfo // the end of the scenario is no warning
			}
		}
		msg := resultMsg{gen: gen, op: o, frame: f, acted: acted, note: note, level: lvl, finish: fin, hist: hx}
		if o.kind == opPoll {
			msg.freeFailed, _ = r.failures()
			if room != nil {
				msg.held = room.HeldBack()
			}
		}
		return msg
	}
}

// pollCost is what a poll of the screen costs the room, in worker actions: reading and
// drawing the rows (about 50 of them cost one action) and the checks.
func pollCost(f *common.Frame) int {
	if f == nil {
		return 1
	}
	return 1 + len(f.Rows)/50
}

// openCmd stops the free run, if any, then opens name through Config.Open (which closes the
// previous session) and reads its first frame.
func (m Model) openCmd(name string, gen int) tea.Cmd {
	ctx, open, g, r := m.ctx, m.cfg.Open, m.gate, m.runner
	return func() tea.Msg {
		if !g.enter() {
			return nil
		}
		defer g.leave()
		// No worker may run on a session that Open is about to close. The errors a worker
		// stopped on belong to the session being thrown away.
		_ = r.stop()
		if open == nil {
			return openedMsg{gen: gen, name: name, err: fmt.Errorf("no way to open a scenario")}
		}
		s, err := openSession(ctx, open, name)
		if err != nil {
			return openedMsg{gen: gen, name: name, err: err}
		}
		f, err := common.Capture(ctx, s)
		if err != nil {
			return openedMsg{gen: gen, name: name, err: err}
		}
		return openedMsg{gen: gen, name: name, sess: s, frame: f}
	}
}

// openSession opens name through Config.Open as the lab wants every session it shows, the first
// and each one a step back rebuilds: recording each action's SQL (the SQL pane, v) and the
// outbox at the moments a transcript shows (w).
func openSession(ctx context.Context, open func(context.Context, string) (*engine.Session, error), name string) (*engine.Session, error) {
	s, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	s.TraceSQL(true)
	s.RecordMoments()
	return s, nil
}

// opened takes a freshly opened session.
func (m Model) opened(msg openedMsg) (Model, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil
	}
	m.busy = false
	m.sess, m.frame, m.changes = msg.sess, msg.frame, common.NoChanges(msg.frame)
	m.finish.ran = false
	m.outbox.Offset = 0
	m.keys.setSession(msg.err == nil)
	if msg.err != nil {
		m.workers.Opened(false, 0)
	}
	m.keys.setRowLocks(msg.err == nil && msg.frame != nil && msg.frame.RowLocks) // PostgreSQL's only
	if msg.err == nil && msg.frame != nil {
		m.keys.setLessonToggles(msg.frame.LessonToggles) // the lesson's run uses them
	} else {
		m.keys.setLessonToggles(nil)
	}
	// The history starts anew: rebuilding it opens the same scenario again through
	// Config.Open, which re-creates the same database file.
	open, name := m.cfg.Open, msg.name
	m.track = history.Open(msg.sess, func(ctx context.Context) (*engine.Session, error) { return openSession(ctx, open, name) })
	m.ask = m.ask.Reset()
	m.keys.Answer.SetEnabled(false)
	m = m.replayOpened(msg)
	if msg.err != nil {
		m.status = common.Status{Text: fmt.Sprintf("could not open %s (%s tries again, %s opens the next scenario): %v",
			msg.name, common.KeyName(m.keys.Reset), common.KeyName(m.keys.NextScenario), msg.err), Level: common.LevelError}
	} else {
		m.workers.Opened(true, len(msg.frame.Workers))
		m.play.Reset() // a fresh scenario starts at its own pace: R starts from it again
		m.free.pace = m.free.pace.For(len(msg.frame.Rows), len(msg.frame.Workers))
		m.status = common.Status{Text: fmt.Sprintf("opened %s: %s steps, %s runs to the end, %s shows every key",
			msg.frame.Name, common.KeyName(m.keys.Step), common.KeyName(m.keys.Finish), common.KeyName(m.keys.Help))}
	}
	m.relayout()
	return m.drain()
}

// result takes what an engine command did and the frame it read.
func (m Model) result(msg resultMsg) (Model, tea.Cmd) {
	if msg.gen != m.gen {
		return m, nil // a command of a session that has since been replaced
	}
	m.busy = false
	hx := msg.hist
	if hx.sess != nil {
		m.sess = hx.sess // rebuilt: the old session is closed
	}
	m.track = m.track.Took(hx.timeline, msg.op.kind == opGoto || msg.op.kind == opReplay, msg.op.isStep() && msg.acted)
	if (msg.op.kind == opGoto || msg.op.kind == opReplay) && hx.timeline.Valid {
		m.ask.Open = nil
		m.play.Stop()
	}
	var asking bool
	if m.ask, asking = m.ask.Took(hx.q, hx.timeline); asking {
		m.play.Stop()    // auto-play waits for the answer too
		q := m.queue[:0] // steps pressed after the one that found it would run past it
		for _, o := range m.queue {
			if !o.isStep() {
				q = append(q, o)
			}
		}
		m.queue = q
	}
	m.keys.Answer.SetEnabled(m.ask.Open != nil)
	wasStalled := verdict.Stalled(m.frame) != ""
	if msg.frame != nil {
		m.changes = common.Diff(m.frame, msg.frame)
		m.frame = msg.frame
		m.keys.setRowLocks(msg.frame.RowLocks)           // the toggles of PostgreSQL's only
		m.keys.setLessonToggles(msg.frame.LessonToggles) // and those of the lesson's run
		m.relayout()
		if !m.free.on {
			// Free-running, every poll changes rows: the table stays where the user put it.
			m.outbox.Follow(m.changes.FirstRow)
		}
	}
	if msg.note != "" {
		m.status = common.Status{Text: msg.note, Level: msg.level}
	}
	if why := verdict.Stalled(m.frame); why != "" && !wasStalled && msg.op.kind != opFinish {
		m.status = common.Status{Text: "the run ended: did not finish: " + why, Level: common.LevelWarn} // e says it with its verdict
	}
	if msg.op.kind == opFinish {
		m = m.finished(msg)
	}
	var graded []string
	if m.ask, graded = m.ask.Grade(msg.frame, m.track.Line); len(graded) > 0 {
		m.status.Text = strings.Join(append(graded, m.status.Text), " · ")
	}
	if msg.op.kind == opPoll {
		var tick, cmd tea.Cmd
		m, tick = m.polled(msg)
		m, cmd = m.drain()
		return m, tea.Batch(tick, cmd)
	}
	if msg.op.auto {
		m.play.Pending = false
		switch {
		case !msg.acted && m.play.Playing && m.frame != nil && m.frame.Done:
			m.play.Stop()
			m.status = common.Status{Text: "auto-play stopped at the end: " + msg.note} // not a warning
		case !msg.acted && m.play.Playing:
			m.play.Stop()
			m.status = common.Status{Text: "auto-play stopped: " + msg.note, Level: msg.level}
		}
	}
	return m.drain()
}

// tick is one beat of auto-play: one step, unless the last one has not come back yet.
func (m Model) tick(msg pace.TickMsg) (Model, tea.Cmd) {
	if !m.play.Current(msg) {
		return m, nil // a tick of a loop that has been stopped
	}
	if m.sess == nil {
		m.play.Stop()
		return m, nil
	}
	next := m.play.Next(m.after)
	if m.play.Pending || m.busy {
		return m, next
	}
	m.play.Pending = true
	var cmd tea.Cmd
	m, cmd = m.enqueue(op{cmd: engine.CmdNext{}, auto: true})
	return m, tea.Batch(cmd, next)
}

// noSession says why the engine keys do nothing when no scenario is open.
func noSession(k KeyMap) string {
	return fmt.Sprintf("no scenario is open: %s tries again, %s opens the next one", common.KeyName(k.Reset), common.KeyName(k.NextScenario))
}
