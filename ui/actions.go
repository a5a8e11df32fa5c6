package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/caption"
	"leaselab/ui/common"
	"leaselab/ui/question"
)

// whyOff says why the key of act, which is off now, does nothing; "" when there is nothing to
// say (a scroll key when every row is on screen, esc with nothing to close). closed: no scenario
// is open, nor being opened; target is the scenario open.
func (k KeyMap) whyOff(act action, closed bool, target string) string {
	switch {
	case act == actNone:
		return ""
	case k.free && (act == actPlay || act == actFinish):
		return freeOff(k)
	case k.finishing && (act == actPlay || act == actFree):
		return finishingOff(k)
	case closed && k.needsSession(act):
		return noSession(k)
	case act == actAnswer:
		return question.NoQuestion(k.Answer, k.Step)
	case act == actExplore:
		return fmt.Sprintf("%s (explore its schedules) is not in this lab: `leaselab explore %s` searches them from a shell", common.KeyName(k.Explore), target)
	case act == actShare:
		return fmt.Sprintf("%s (share code) is not in this lab: `leaselab share %s` prints the code of its start from a shell", common.KeyName(k.Share), target)
	}
	return ""
}

// whyOffCommand says why the key of command c, which is off now, does nothing: a step while
// the workers run on their own or e runs to the end, any of them with no scenario open, a
// toggle this database or this lesson does not have. closed: no scenario is open, nor being
// opened; open: a scenario is open.
func (k KeyMap) whyOffCommand(c engine.Command, closed, open bool) string {
	info := c.Info()
	t, toggle := engine.LookupToggle(info.Toggle)
	switch {
	case k.free && info.Step:
		return freeOff(k)
	case k.finishing && info.Step:
		return finishingOff(k)
	case closed && !(toggle && t.RowLocks): // the row-lock toggles wait for a frame
		return noSession(k)
	case toggle && t.RowLocks:
		return t.Name + " is PostgreSQL's: SQLite has no row locks (its claim takes the one write lock); start the lab with --db postgres://… to use it"
	case toggle && t.Where != engine.InLab && open:
		return fmt.Sprintf("%s (%s) is a toggle of the lessons with %s: this one has none", t.Name, t.Key, usedWith(t))
	}
	return ""
}

// finishingOff is why a key that steps or runs the workers is off while e runs to the end.
func finishingOff(k KeyMap) string {
	return fmt.Sprintf("running to the end at full speed: %s stops it first", common.KeyName(k.Finish))
}

// usedWith says in words what a run has when it uses t, a toggle of the InRetries or InRescue
// group (engine.Probe.UsesToggle).
func usedWith(t engine.Toggle) string {
	switch {
	case t.Where == engine.InRetries:
		return "a provider that fails"
	case t.UsedWith&engine.UsedWithRescuer != 0:
		return "a rescuer"
	case t.Name == engine.ToggleStrictExpiry:
		return "a lesson about a lease's last instant"
	}
	return "a skewed clock"
}

// do carries out one key's action.
func (m Model) do(act action, k tea.KeyMsg) (Model, tea.Cmd) {
	switch act {
	case actQuit:
		m.quitting = true
		m.play.Stop()
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
			m.status = common.Status{Text: fmt.Sprintf("stopped running to the end after %d %s: %s steps on, %s runs to the end again",
				m.finish.actions, common.Plural(m.finish.actions, "step"), common.KeyName(m.keys.Step), common.KeyName(m.keys.Finish))}
			return m, nil
		}
		return m.startFinish()
	case actPlay:
		if m.play.Playing {
			m.play.Stop()
			m.status = common.Status{Text: fmt.Sprintf("auto-play paused: %s steps, %s plays again", common.KeyName(m.keys.Step), common.KeyName(m.keys.Play))}
			return m, nil
		}
		cmd := m.play.Start(m.after)
		m.status = common.Status{Text: fmt.Sprintf("auto-play: %s (%s slower, %s faster, %s pauses)",
			m.play.Rate(), common.KeyName(m.keys.Slower), common.KeyName(m.keys.Faster), common.KeyName(m.keys.Play))}
		return m, cmd
	case actSlower, actFaster:
		return m.changePace(act)
	case actReset:
		return m.reopen(m.target, "reset")
	case actNextScenario:
		return m.reopen(otherScenario(m.cycle, m.target, 1), "next scenario")
	case actPrevScenario:
		return m.reopen(otherScenario(m.cycle, m.target, -1), "previous scenario")
	case actExplain:
		m.caption = m.caption.Next(m.scene(), m.layout.caption > 0)
		m.relayout()
	case actTranscript:
		return m.writeTranscript()
	case actHelp:
		m.showHelp = !m.showHelp
		m.relayout()
	case actBack, actPrevMark, actNextMark:
		return m.historyKey(act)
	case actAnswer: // with no question open: the question pane takes them while one is
		m.status = common.Status{Text: question.NoQuestion(m.keys.Answer, m.keys.Step), Level: common.LevelWarn}
	case actExplore:
		return m.explore()
	case actShare:
		return m.shareCode()
	case actClose:
		// esc closes the ? screen first, then the explanation.
		if m.showHelp {
			m.showHelp = false
		} else if m.layout.caption > 0 {
			m.caption.Mode = caption.Off
		}
		m.relayout()
	}
	return m, nil
}
