package ui

import (
	"context"
	"fmt"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/pace"
	"leaselab/ui/workers"
)

// While the workers free-run (g), each on its own goroutine and connection, the lab does not
// step them: it polls the database on a tick and redraws. Crash, restart, pause, the toggles and
// the clock keep working (the engine makes them safe to call while workers run); the step keys
// and auto-play are off. Starting, stopping and re-pacing the run happen in tea.Cmds.

// freePollEvery is how often the screen reads the database while the workers free-run.
const freePollEvery = 100 * time.Millisecond

// freeHeldPollEvery is how often it reads the database while the room holds the free runs back
// (a served lab among many): each read of a large table costs the room what several actions do.
const freeHeldPollEvery = 500 * time.Millisecond

// freeStillPolls is how many polls in a row must find every worker waiting before the status
// line explains why.
const freeStillPolls = 3

// pollMsg asks for the next poll of a free run. id names the poll loop that sent it: starting or
// stopping a free run begins a new id, so a tick of an old loop is dropped and two loops never
// run at once.
type pollMsg struct{ id int }

// freeRun is a free run as the lab uses it: engine.FreeRun, or a test's stand-in.
type freeRun interface {
	Err() error  // the errors workers stopped on so far, without waiting
	Stop() error // stop every worker at a step boundary and wait
}

// freeRunner holds the session's free run, if any. Every copy of the model shares it (as they
// share the gate), so that whatever ends the lab — q, a reset, or Run after the program has
// ended — can stop it. Its methods wait for workers: call them from a tea.Cmd, never in Update.
type freeRunner struct {
	mu       sync.Mutex
	run      freeRun
	reported int // worker errors of this run already reported
	// startRun starts the workers; nil: Session.StartFree.
	startRun func(ctx context.Context, s *engine.Session, pace time.Duration) freeRun
	// room, when set, admits each worker's action (Config.Room).
	room Room
}

// start stops the run in progress, if any, and starts every worker of s at pace.
func (r *freeRunner) start(ctx context.Context, s *engine.Session, pace time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.stopLocked()
	if r.startRun != nil {
		r.run = r.startRun(ctx, s, pace)
	} else {
		var admit func(context.Context) error
		if room := r.room; room != nil {
			admit = func(ctx context.Context) error { return room.Admit(ctx, 1) }
		}
		r.run = s.StartFree(ctx, pace, admit)
	}
	return err
}

// stop stops the run, if any: every worker finishes the action in flight, then its goroutine
// ends. It returns the errors the workers stopped on.
func (r *freeRunner) stop() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopLocked()
}

func (r *freeRunner) stopLocked() error {
	if r.run == nil {
		return nil
	}
	err := r.run.Stop()
	r.run, r.reported = nil, 0
	return err
}

// running reports whether workers are free-running.
func (r *freeRunner) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.run != nil
}

// failures returns how many workers of the run have stopped on an error, and the error when
// one has done so since the last call (so that each is reported once, while the others run).
func (r *freeRunner) failures() (n int, fresh error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.run == nil {
		return 0, nil
	}
	err := r.run.Err()
	n = countErrs(err)
	if n > r.reported {
		r.reported, fresh = n, err
	}
	return n, fresh
}

// countErrs counts the errors joined in err.
func countErrs(err error) int {
	if err == nil {
		return 0
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return len(j.Unwrap())
	}
	return 1
}

// freeMode is the screen's side of a free run: whether it is on, its poll loop, and its pace.
type freeMode struct {
	on      bool
	id      int    // the poll loop's id
	polling bool   // a poll is in flight
	polls   int    // poll results taken since the run started
	failed  int    // workers of the run that stopped on an error
	held    string // how the room slows this run down now (a served lab), "" when it does not
	still   int    // polls in a row that found every worker waiting
	pace    pace.Free
}

func newFreeMode() freeMode { return freeMode{pace: pace.NewFree()} }

// startFree starts the free run (in a tea.Cmd, behind the keys already waiting) and its poll
// loop.
func (m Model) startFree() (Model, tea.Cmd) {
	m.play.Stop()
	m.free.on, m.free.polls, m.free.still, m.free.failed, m.free.held = true, 0, 0, 0, ""
	m.free.id++
	m.setRunning(true, m.keys.finishing)
	m.status = common.Status{Text: "starting the free run …"}
	m, cmd := m.enqueue(op{kind: opFreeStart, pace: m.free.pace.Interval()})
	return m, tea.Batch(cmd, m.after(freePollEvery, pollMsg{id: m.free.id}))
}

// stopFree ends the poll loop at once and stops the workers in a tea.Cmd.
func (m Model) stopFree() (Model, tea.Cmd) {
	m.leaveFree()
	m.status = common.Status{Text: "stopping the workers at a step boundary …"}
	return m.enqueue(op{kind: opFreeStop})
}

// leaveFree switches the screen back to stepping: the poll loop's next tick is dropped and the
// step keys come back. Whoever calls it must see that the run is stopped (opFreeStop, or the
// stop that opOpen and quitting do first).
func (m *Model) leaveFree() {
	if !m.free.on {
		return
	}
	m.free.on = false
	m.free.id++
	m.setRunning(false, m.keys.finishing)
}

// setRunning switches the screen to whether the workers free-run (free) and e runs to the end
// (finishing): the keys that step are off while either does, the workers pane says it is busy,
// and the layout follows.
func (m *Model) setRunning(free, finishing bool) {
	m.keys.setFree(free)
	m.keys.setFinishing(finishing)
	m.workers.SetBusy(free || finishing)
	m.relayout()
}

// repace changes the free run's pace: the workers stop at a step boundary and start again.
func (m Model) repace(act action) (Model, tea.Cmd) {
	if act == actSlower {
		m.free.pace.Slower()
	} else {
		m.free.pace.Faster()
	}
	m.status = common.Status{Text: "free run: " + m.free.pace.Text()}
	return m.enqueue(op{kind: opFreePace, pace: m.free.pace.Interval()})
}

// pollTick is one beat of the poll loop: read the database, unless a command is in flight
// (then the next beat will).
func (m Model) pollTick(msg pollMsg) (Model, tea.Cmd) {
	if msg.id != m.free.id || !m.free.on || m.sess == nil {
		return m, nil // a tick of a loop that has been stopped
	}
	if m.busy {
		return m, m.after(freePollEvery, msg)
	}
	m.free.polling = true
	return m.dispatch(op{kind: opPoll, poll: msg.id})
}

// polled takes a poll's frame: it schedules the next beat, and when several polls in a row
// found every worker waiting (not merely pacing), says why.
func (m Model) polled(msg resultMsg) (Model, tea.Cmd) {
	m.free.polling = false
	if msg.op.poll != m.free.id || !m.free.on {
		return m, nil
	}
	m.free.polls++
	m.free.failed, m.free.held = msg.freeFailed, msg.held
	if msg.frame != nil && allWaiting(msg.frame) {
		m.free.still++
	} else {
		m.free.still = 0
	}
	if m.free.still == freeStillPolls && m.frame != nil {
		m.status = common.Status{Text: freeIdle(m.frame, m.keys), Level: common.LevelWarn}
	}
	every := freePollEvery
	if m.free.held != "" {
		every = freeHeldPollEvery // the room's time goes to the workers rather than to redraws
	}
	return m, m.after(every, pollMsg{id: m.free.id})
}

// allWaiting reports whether no worker of f has anything to do until something changes: each
// is crashed, paused, idle after a claim that found nothing, or waiting on the frozen clock.
func allWaiting(f *common.Frame) bool {
	for _, v := range f.Workers {
		if !v.Crashed && !v.Paused && !v.Quiet && v.Next != engine.ActNone {
			return false
		}
	}
	return true
}

// freeIdle explains why free-running workers do nothing: all done, or waiting on the frozen
// scenario clock, or crashed and paused.
func freeIdle(f *common.Frame, k KeyMap) string {
	if s := f.Summary; s != nil && s.Messages > 0 && s.Outbox.Processed == s.Messages {
		return fmt.Sprintf("%s Processed: the workers poll for more; %s stops them",
			allMessages(s.Messages), common.KeyName(k.Free))
	}
	return "the workers are waiting — " + whyNothing(f, k)
}

// allMessages is "all 6 messages", or "the 1 message".
func allMessages(n int) string {
	if n == 1 {
		return "the 1 message"
	}
	return fmt.Sprintf("all %d messages", n)
}

// applyFree performs the free-run operations, which need the runner as well as the session.
// handled is false for every other operation.
func applyFree(ctx context.Context, s *engine.Session, r *freeRunner, o op, k KeyMap) (note string, lvl common.Level, handled bool) {
	paced, wk := pace.Words(o.pace), workers.DefaultKeys() // the worker keys' names, which never change
	var err error
	switch o.kind {
	case opPoll:
		if _, err := r.failures(); err != nil {
			// The worker's goroutine has ended; the others run on.
			return fmt.Sprintf("a free-running worker stopped on an error (the others run on; %s stops them, %s resets): %v",
				common.KeyName(k.Free), common.KeyName(k.Reset), err), common.LevelError, true
		}
		return "", common.LevelInfo, true
	case opFreeStart:
		err = r.start(ctx, s, o.pace)
		note = fmt.Sprintf("FREE-RUNNING: every worker on its own goroutine and connection, %s; %s keep working, %s change the pace, %s stops",
			paced, common.KeyNames(wk.Crash, wk.Restart, wk.Pause, k.PastLease, k.Clock), common.KeyNames(k.Slower, k.Faster), common.KeyName(k.Free))
	case opFreePace:
		err = r.start(ctx, s, o.pace)
		note = "free run: " + paced
	case opFreeStop:
		err = r.stop()
		note = fmt.Sprintf("stopped: every worker finished the action in flight; %s steps again, %s runs them free again",
			common.KeyName(k.Step), common.KeyName(k.Free))
	default:
		if o.isStep() && r.running() {
			return freeOff(k), common.LevelWarn, true
		}
		return "", common.LevelInfo, false
	}
	if err != nil {
		return note + " (a worker had stopped on an error: " + err.Error() + ")", common.LevelError, true
	}
	return note, common.LevelInfo, true
}

// freeOff says why the step keys do nothing while the workers free-run.
func freeOff(k KeyMap) string {
	return fmt.Sprintf("the workers run free: nothing steps them but themselves (%s stops them)", common.KeyName(k.Free))
}

// changePace is < or >: the free run's pace while the workers run free, auto-play's speed while
// it plays, and both before either starts (the status line says what each will be).
func (m Model) changePace(act action) (Model, tea.Cmd) {
	if m.free.on {
		return m.repace(act)
	}
	slower := act == actSlower
	if slower {
		m.play.Slower()
	} else {
		m.play.Faster()
	}
	if m.play.Playing {
		m.status = common.Status{Text: "auto-play speed: " + m.play.Rate()}
		return m, nil
	}
	if slower {
		m.free.pace.Slower()
	} else {
		m.free.pace.Faster()
	}
	m.status = common.Status{Text: fmt.Sprintf("auto-play (%s): %s · free run (%s): %s",
		common.KeyName(m.keys.Play), m.play.Rate(), common.KeyName(m.keys.Free), m.free.pace.Text())}
	return m, nil
}
