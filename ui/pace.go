package ui

import (
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/ui/common"
)

// The pace: how fast auto-play steps (player) and how long each free-running worker pauses
// after an action (freeMode). A scenario starts at a pace chosen by its size; < and > change it.

// freeMinute is how long a free run of a scenario should last at its starting pace: long
// enough to press x while a worker holds a row.
const freeMinute = time.Minute

// actionsPerMessage is about how many actions a message takes a worker: claim, provider call,
// finalize.
const actionsPerMessage = 3

// paceFor picks the starting pace of a scenario of messages rows and workers workers: the
// slowest at which its free run takes at most freeMinute, each worker doing its share of the
// actions one pace apart.
func (f freeMode) paceFor(messages, workers int) int {
	perWorker := time.Duration((actionsPerMessage*messages + workers - 1) / max(workers, 1))
	for i, p := range f.paces {
		if perWorker*p <= freeMinute {
			return i
		}
	}
	return len(f.paces) - 1
}

// slower and faster change the pace; the next start uses it.
func (f *freeMode) slower() { f.pace = max(0, f.pace-1) }
func (f *freeMode) faster() { f.pace = min(len(f.paces)-1, f.pace+1) }

// interval is the pause each worker takes after every action (0: full speed).
func (f freeMode) interval() time.Duration { return f.paces[f.pace] }

// paceText describes the pace in words.
func (f freeMode) paceText() string { return paceWords(f.interval()) }

// paceWords describes a pace: "pace 10ms", "full speed".
func paceWords(d time.Duration) string {
	if d > 0 {
		return "pace " + d.String()
	}
	return "full speed"
}

// setPace gives a freshly opened scenario its starting pace: auto-play's default speed, and a
// free-run pace chosen by its size, so that a free run takes about a minute. A reset (R) starts
// from it again, whatever < and > made of it.
func (m *Model) setPace(f *common.Frame) {
	m.play.speed = defaultSpeed
	m.free.pace = m.free.paceFor(len(f.Rows), len(f.Workers))
}

// changePace is < or >: the free run's pace while the workers run free, auto-play's speed while
// it plays, and both before either starts (the status line says what each will be).
func (m Model) changePace(act action) (Model, tea.Cmd) {
	if m.free.on {
		return m.repace(act)
	}
	slower := act == actSlower
	if slower {
		m.play.slower()
	} else {
		m.play.faster()
	}
	if m.play.playing {
		m.status = common.Status{Text: "auto-play speed: " + m.play.rate()}
		return m, nil
	}
	if slower {
		m.free.slower()
	} else {
		m.free.faster()
	}
	m.status = common.Status{Text: fmt.Sprintf("auto-play (%s): %s · free run (%s): %s",
		common.KeyName(m.keys.Play), m.play.rate(), common.KeyName(m.keys.Free), m.free.paceText())}
	return m, nil
}
