package ui

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
)

// historyOpened starts the history of a freshly opened session. Rebuilding it opens the same
// scenario again through Config.Open, which re-creates the same database file.
func (m Model) historyOpened(msg openedMsg) Model {
	m.hist, m.line, m.ask = nil, timeline{}, newAskState()
	m.keys.Answer.SetEnabled(false)
	if msg.err != nil || msg.sess == nil {
		return m
	}
	open, name := m.cfg.Open, msg.name
	m.hist = engine.NewHistory(msg.sess, func(ctx context.Context) (*engine.Session, error) { return openSession(ctx, open, name) })
	m.line = timelineOf(m.hist)
	return m
}

// historyResult takes what the history did in a command: a rebuilt session, the timeline, a
// question.
func (m Model) historyResult(msg resultMsg) Model {
	hx := msg.hist
	if hx.sess != nil {
		m.sess = hx.sess
	}
	if hx.timeline.valid {
		m.line = hx.timeline
	}
	if (msg.op.kind == opGoto || msg.op.kind == opReplay) && hx.timeline.valid {
		m.steps = historySteps(m.line)
		m.ask.open = nil
		m.play.stop()
	}
	return m.askResult(hx)
}

// historyKey takes the history keys: one action back, or to the previous or next marked moment.
func (m Model) historyKey(act action) (Model, tea.Cmd) {
	switch {
	case m.hist == nil:
		m.status = common.Status{Text: noSession(m.keys), Level: common.LevelWarn}
		return m, nil
	case m.free.on:
		m.status = common.Status{Text: fmt.Sprintf("the workers run free: %s stops them, then %s goes back", common.KeyName(m.keys.Free), common.KeyName(m.keys.Back)), Level: common.LevelWarn}
		return m, nil
	case m.finish.on:
		m.status = common.Status{Text: fmt.Sprintf("running to the end at full speed: %s stops it first", common.KeyName(m.keys.Finish)), Level: common.LevelWarn}
		return m, nil
	}
	t, ok := m.line.target(act)
	if !ok {
		m.status = common.Status{Text: m.line.noTarget(act, m.keys)}
		return m, nil
	}
	m.play.stop()
	return m.enqueue(op{kind: opGoto, target: t})
}

// target is the position b, [ or ] go to from the current one. [ and ] land just after a
// marked move (a crash, a reclaim, a rejected finalize, a free run), so that the screen shows
// that moment; at the ends, the start and the newest move.
func (t timeline) target(act action) (int, bool) {
	switch act {
	case actBack:
		return t.pos - 1, t.pos > 0
	case actPrevMark:
		limit := t.pos // no position after a move that cannot be replayed can be rebuilt
		for i, e := range t.entries[:t.pos] {
			if !e.Exact {
				limit = i
				break
			}
		}
		for i := t.pos - 2; i >= 0; i-- {
			if t.entries[i].Mark != '·' && i+1 <= limit {
				return i + 1, true
			}
		}
		return 0, t.pos > 0
	case actNextMark:
		for i := t.pos; i < len(t.entries); i++ {
			if t.entries[i].Mark != '·' {
				return i + 1, true
			}
		}
		return len(t.entries), t.pos < len(t.entries)
	}
	return 0, false
}

// noTarget says why b, [ or ] has nowhere to go.
func (t timeline) noTarget(act action, k KeyMap) string {
	if act == actNextMark {
		return fmt.Sprintf("at the newest step (%d): nothing recorded after it; %s steps on", t.pos, common.KeyName(k.Step))
	}
	return fmt.Sprintf("at the start: nothing to go back to; %s steps", common.KeyName(k.Step))
}
