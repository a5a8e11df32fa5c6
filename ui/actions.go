package ui

import (
	"fmt"

	"leaselab/engine"

	tea "github.com/charmbracelet/bubbletea"
)

// whyOff says why the key of act, which is off now, does nothing; "" when there is nothing to
// say (a scroll key when every row is on screen, esc with nothing to close).
func (m Model) whyOff(act action) string {
	k := m.keys
	steps := act == actStep || act == actStepWorker || act == actPlay
	switch {
	case act == actNone:
		return ""
	case k.free && (steps || act == actFinish):
		return freeOff(k)
	case k.finishing && (steps || act == actFree):
		return fmt.Sprintf("running to the end at full speed: %s stops it first", keyName(k.Finish))
	case m.sess == nil && !m.busy && k.needsSession(act):
		return noSession(k)
	case act == actAnswer:
		return noQuestion(k)
	case act == actExplore:
		return fmt.Sprintf("%s (explore its schedules) is not in this lab: `leaselab explore %s` searches them from a shell", keyName(k.Explore), m.target)
	}
	if t, ok := toggleOf(act); ok && t.RowLocks {
		return t.Name + " is PostgreSQL's: SQLite has no row locks (its claim takes the one write lock); start the lab with --db postgres://… to use it"
	}
	if t, ok := toggleOf(act); ok && t.Where != engine.InLab && m.sess != nil {
		return fmt.Sprintf("%s (%s) is a toggle of the lessons with %s: this one has none", t.Name, t.Key, usedWith(t))
	}
	return ""
}

// usedWith says in words what a run has when it uses t, a toggle of the InRetries or InRescue
// group (engine.Session.UsesToggle).
func usedWith(t engine.Toggle) string {
	switch {
	case t.Where == engine.InRetries:
		return "a provider that fails"
	case t.Name == engine.ToggleGuardedRescue:
		return "a rescuer"
	case t.Name == engine.ToggleStrictExpiry:
		return "a lesson about a lease's last instant"
	}
	return "a skewed clock"
}

// do carries out one key's action.
func (m Model) do(act action, k tea.KeyMsg) (Model, tea.Cmd) {
	sel := m.workers.selected
	if t, ok := toggleOf(act); ok {
		return m.enqueue(op{cmd: engine.CmdToggle{Name: t.Name}})
	}
	switch act {
	case actQuit:
		m.quitting = true
		m.play.stop()
		m.stopFinish()
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
	case actFinish:
		if m.finish.on {
			m.stopFinish()
			m.status = status{text: fmt.Sprintf("stopped running to the end after %d %s: %s steps on, %s runs to the end again",
				m.finish.actions, plural(m.finish.actions, "step"), keyName(m.keys.Step), keyName(m.keys.Finish))}
			return m, nil
		}
		return m.startFinish()
	case actStep:
		return m.enqueue(op{cmd: engine.CmdNext{}})
	case actStepWorker:
		return m.enqueue(op{cmd: engine.CmdStepWorker{Worker: sel}})
	case actCrash:
		return m.enqueue(op{cmd: engine.CmdCrash{Worker: sel}})
	case actRestart:
		return m.enqueue(op{cmd: engine.CmdRestart{Worker: sel}})
	case actPause:
		return m.enqueue(op{cmd: engine.CmdPause{Worker: sel}})
	case actClock:
		return m.enqueue(op{cmd: engine.CmdClock{Delta: clockStep}})
	case actPastLease:
		return m.enqueue(op{cmd: engine.CmdPastLease{}})
	case actPlay:
		if m.play.playing {
			m.play.stop()
			m.status = status{text: fmt.Sprintf("auto-play paused: %s steps, %s plays again", keyName(m.keys.Step), keyName(m.keys.Play))}
			return m, nil
		}
		cmd := m.play.start(m.after)
		m.status = status{text: fmt.Sprintf("auto-play: %s (%s slower, %s faster, %s pauses)",
			m.play.rate(), keyName(m.keys.Slower), keyName(m.keys.Faster), keyName(m.keys.Play))}
		return m, cmd
	case actSlower, actFaster:
		return m.changePace(act)
	case actReset:
		return m.reopen(m.target, "reset")
	case actNextScenario:
		return m.reopen(m.otherScenario(1), "next scenario")
	case actPrevScenario:
		return m.reopen(m.otherScenario(-1), "previous scenario")
	case actExplain:
		m.explain = m.explainNext() // incident.go
		m.relayout()
	case actTranscript:
		return m.writeTranscript()
	case actHelp:
		m.showHelp = !m.showHelp
		m.relayout()
	case actBack, actPrevMark, actNextMark:
		return m.historyKey(act)
	case actAnswer: // with no question open: the question pane takes them while one is
		m.status = status{text: noQuestion(m.keys), level: levelWarn}
	case actExplore:
		return m.explore()
	case actClose:
		// esc closes the ? screen first, then the explanation.
		if m.showHelp {
			m.showHelp = false
		} else if m.layout.caption > 0 {
			m.explain = explainOff
		}
		m.relayout()
	}
	return m, nil
}
