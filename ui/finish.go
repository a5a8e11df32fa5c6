package ui

import (
	"context"
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/verdict"
)

// e runs the rest of the scenario's script at full speed, as leaselab run does, and stops at
// its end, where the verdict is. It runs in chunks of finishChunk, each a tea.Cmd like any
// other engine command, so that the screen shows the progress between two chunks and a key
// pressed meanwhile (e again, a crash, a reset) is taken at the next one.

// finishChunk is how long one chunk of e runs before the screen shows its progress.
const finishChunk = 200 * time.Millisecond

// finishMode is the screen's side of e: whether it runs, its id (starting or stopping begins a
// new one, so a chunk of an old run is not followed by another), and what it has done.
type finishMode struct {
	on      bool
	id      int
	actions int           // steps run so far (each one a step of the history)
	took    time.Duration // wall time the chunks took so far
	ran     bool          // a run to the end has reached the script's end on this session
}

// finishResult is what one chunk of e did.
type finishResult struct {
	actions int
	took    time.Duration
	done    bool // the script is at its end
}

// startFinish begins running to the end, behind the keys already waiting.
func (m Model) startFinish() (Model, tea.Cmd) {
	if f := m.frame; f != nil && (m.finish.ran || f.ScriptTotal > 0) && f.ScriptIndex >= f.ScriptTotal {
		m.status = common.Status{Text: "the script is already at its end — " + whyNothing(f, m.keys)}
		if !f.Done {
			m.status = common.Status{Text: fmt.Sprintf("the script is at its end: %s steps on by hand, %s starts it again",
				common.KeyName(m.keys.Step), common.KeyName(m.keys.Reset))}
		}
		return m, nil
	}
	m.play.Stop()
	m.finish = finishMode{on: true, id: m.finish.id + 1, ran: m.finish.ran}
	m.setRunning(m.keys.free, true)
	m.status = common.Status{Text: fmt.Sprintf("running to the end at full speed … (%s stops)", common.KeyName(m.keys.Finish))}
	return m.enqueue(op{kind: opFinish, poll: m.finish.id})
}

// stopFinish ends running to the end: a chunk in flight finishes, and none follows.
func (m *Model) stopFinish() {
	if !m.finish.on {
		return
	}
	m.finish.on = false
	m.finish.id++
	m.setRunning(m.keys.free, false)
}

// finished takes a chunk's result: the next chunk, or the end.
func (m Model) finished(msg resultMsg) Model {
	if msg.op.poll != m.finish.id || !m.finish.on {
		return m // stopped meanwhile
	}
	m.finish.actions += msg.finish.actions
	m.finish.took += msg.finish.took
	if msg.level == common.LevelError {
		m.stopFinish()
		return m
	}
	if !msg.finish.done {
		m.status = common.Status{Text: m.finish.progress(m.frame, m.keys.Finish)}
		m.queue = append(m.queue, op{kind: opFinish, poll: m.finish.id})
		return m
	}
	m.stopFinish()
	m.finish.ran = true
	// The script's end is where leaselab run gives its verdict, whether or not a worker would
	// still poll once more by hand.
	ending := ""
	if f := m.frame; f != nil && f.Summary != nil {
		ending = " — VERDICT: FAIL"
		if f.Summary.Passed {
			ending = " — VERDICT: PASS"
		}
		if why := verdict.Stalled(f); why != "" {
			ending += " (did not finish: the verdict says why)"
		}
	}
	m.status = common.Status{Text: fmt.Sprintf("ran to the end at full speed: %d %s in %s%s",
		m.finish.actions, common.Plural(m.finish.actions, "step"), m.finish.took.Round(time.Millisecond), ending)}
	return m
}

// progress is the status line while e runs (stop: its key): how far the script and the messages are.
func (fm finishMode) progress(f *common.Frame, stop key.Binding) string {
	text := fmt.Sprintf("running to the end at full speed: %d %s", fm.actions, common.Plural(fm.actions, "step"))
	if f != nil {
		if f.ScriptTotal > 0 {
			text += fmt.Sprintf(", script %d/%d", f.ScriptIndex, f.ScriptTotal)
		}
		if s := f.Summary; s != nil {
			text += fmt.Sprintf(", %d/%d processed", s.Outbox.Processed, s.Messages)
		}
	}
	return text + fmt.Sprintf(", %s so far (%s stops)", fm.took.Round(100*time.Millisecond), common.KeyName(stop))
}

// applyFinish runs one chunk of e: the script's next actions, as space would take them, until
// the script is at its end or the chunk's time is up.
func applyFinish(ctx context.Context, s *engine.Session, now func() time.Time) (res finishResult, note string, lvl common.Level) {
	start := now()
	if len(s.Scenario.Steps) == 0 {
		// A scenario without a script is one "run until-done", as RunToEnd (leaselab run) has it.
		s.Scenario.Steps = []engine.Step{{Kind: engine.StepRun, UntilDone: true}}
	}
	for !s.Script().Done() {
		if err := ctx.Err(); err != nil {
			return res, "error: " + err.Error(), common.LevelError
		}
		acted, err := s.Script().Next(ctx)
		if err != nil {
			res.took = now().Sub(start)
			return res, "error: " + err.Error(), common.LevelError
		}
		if acted {
			res.actions++
		}
		if !acted || now().Sub(start) >= finishChunk {
			break
		}
	}
	res.took = now().Sub(start)
	res.done = s.Script().Done()
	return res, "", common.LevelInfo
}
