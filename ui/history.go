package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/history"
	"leaselab/ui/question"

	tea "github.com/charmbracelet/bubbletea"
)

// The lab records every move a key makes (engine.History) and can bring the database back to
// the state after any of them: b, [ and ] rebuild it on a fresh database (the --db file,
// re-created) by replaying the recorded moves, so the screen after a step back shows the rows as
// the database holds them again, not a picture kept aside. The history lives in the engine;
// this file binds it to the lab's operations.

// histResult is what the history part of an engine command did, for Update.
type histResult struct {
	sess     *engine.Session  // the session after a rebuild; nil when it is the same
	q        question.Result  // a question found before the step, or an answered one's step
	timeline history.Timeline // the history as it stands after the command
}

// applyHistory performs o on s as apply does, and records it in h; it also performs the history
// operation (opGoto) and stops at a question. It does I/O.
func applyHistory(ctx context.Context, s *engine.Session, h *engine.History, o op, k KeyMap, now func() time.Time) (note string, lvl common.Level, acted bool, hx histResult) {
	defer func() { hx.timeline = history.Of(h) }()
	if h == nil || h.Session() != s {
		if o.cmd == nil {
			return "", common.LevelInfo, false, hx // b [ ] with no history to move in
		}
		note, lvl, acted = apply(ctx, s, o.cmd, k)
		return note, lvl, acted, hx
	}
	if o.kind == opGoto {
		return gotoNote(ctx, h, s, o, k, now)
	}
	next := o.cmd != nil && o.cmd.Info().Step && o.cmd.Info().Worker < 0 // the script's next step (space)
	q := s.Script().NextQuestion()
	_, qstep, _ := s.Script().Position()
	var ans engine.Answer
	if q != nil {
		// Whether it is asked: a "when … skip:" rule over the settings of this moment.
		ans = q.For(s.Settings(), s.InitialSettings())
	}
	switch {
	case next && q != nil && ans.Skip != "":
		// The question does not apply under these settings: the step runs, and says why.
		defer func() { note = question.SkipNote(ans) + " · " + note }()
	case next && !o.answered && q != nil:
		hx.q.Ask, hx.q.Step = q, qstep
		return question.Note(q, k.Answer.Keys()), common.LevelInfo, false, hx
	case next && o.answered && q != nil:
		// The answer is given: the step runs, and the note starts with right or wrong, and why,
		// as the run gave it: what the step did (engine.Observed), once it is known.
		at := h.Pos() // the history position of the step: the answer counts while it stands
		defer func() {
			hx.q.Asked, hx.q.At = o.answer >= 0, at
			hx.q.Observed, _ = s.Script().Observed(qstep)
			if o.answer < 0 {
				note = "question skipped · " + note
			} else {
				note = question.AnswerNote(q, hx.q.Observed, o.answer) + " · " + note
			}
			hx.timeline = history.Of(h)
		}()
	}
	p := h.Begin()
	note, lvl, acted = apply(ctx, s, o.cmd, k)
	commitNote(h, o.cmd, p, acted, &note)
	return note, lvl, acted, hx
}

// commitNote records c and, when it started a new future, says so in the note. It reports
// whether c was recorded.
func commitNote(h *engine.History, c engine.Command, p engine.Pending, acted bool, note *string) bool {
	ok := h.Commit(c, p, acted)
	if ok && h.Dropped() > 0 {
		*note = fmt.Sprintf("a new future from step %d (the old one, %d %s, was dropped): %s",
			h.Pos()-1, h.Dropped(), common.Plural(h.Dropped(), "step"), *note)
	}
	return ok
}

// recordFree records the start of a free run: no position after it can be rebuilt.
func recordFree(h *engine.History, s *engine.Session, note *string) {
	if h != nil && h.Session() == s {
		commitNote(h, engine.CmdFree{}, h.Begin(), true, note)
	}
}

// finishRecorded runs one chunk of e and records each of its actions as a step of its own, so
// that the header's step, the history's and the actions e ran are one count, and b can go back
// into the middle of a run to the end.
func finishRecorded(ctx context.Context, s *engine.Session, h *engine.History, now func() time.Time) (finishResult, string, common.Level) {
	if h == nil || h.Session() != s {
		return applyFinish(ctx, s, now)
	}
	// A scripted action is the one space would take: along the recorded future it follows it.
	// A scenario with no script gets its one "run until-done" step first, which a replay
	// needs too (CmdFinish does it).
	var c engine.Command = engine.CmdNext{}
	if len(s.Scenario.Steps) == 0 {
		c = engine.CmdFinish{}
	}
	s.Script().FinishSteps()
	var (
		res  finishResult
		note string
	)
	start := now()
	for !s.Script().Done() {
		if err := ctx.Err(); err != nil {
			return res, "error: " + err.Error(), common.LevelError
		}
		p := h.Begin()
		r, err := s.Do(ctx, c)
		acted := r.Acted
		if err != nil {
			res.took = now().Sub(start)
			return res, "error: " + err.Error(), common.LevelError
		}
		var dropped string
		if commitNote(h, c, p, acted, &dropped) {
			res.actions++ // a step of the history: the count the header and the history show
		}
		if note == "" {
			note = dropped // the first action may start a new future: say so
		}
		if !acted || now().Sub(start) >= finishChunk {
			break
		}
	}
	res.took = now().Sub(start)
	res.done = s.Script().Done()
	return res, note, common.LevelInfo
}

// gotoNote brings the history to o.target and says what it did.
func gotoNote(ctx context.Context, h *engine.History, s *engine.Session, o op, k KeyMap, now func() time.Time) (string, common.Level, bool, histResult) {
	var hx histResult
	from := h.Pos()
	start := now() // how long the rebuild took, for the note; the engine has no wall clock
	ns, err := h.Goto(ctx, o.target)
	took := now().Sub(start)
	if ns != s {
		hx.sess = ns
	}
	switch {
	case errors.Is(err, engine.ErrNotReplayable):
		return common.Refusal(err), common.LevelWarn, false, hx
	case err != nil:
		return "error: " + err.Error(), common.LevelError, false, hx
	}
	to := h.Pos()
	how := fmt.Sprintf("rebuilt on a fresh database by replaying %d %s in %s", to, common.Plural(to, "step"), took.Round(time.Millisecond))
	if to > from {
		how = fmt.Sprintf("the recorded %s done again", common.Plural(to-from, "step"))
	}
	return fmt.Sprintf("at step %d of %d: the database as it was (%s); %s steps on along the recorded future, any other action starts a new one",
		to, h.Len(), how, common.KeyName(k.Step)), common.LevelInfo, false, hx
}

// historyKey takes the history keys: one action back, or to the previous or next marked moment.
func (m Model) historyKey(act action) (Model, tea.Cmd) {
	switch {
	case m.track.H == nil:
		m.status = common.Status{Text: noSession(m.keys), Level: common.LevelWarn}
		return m, nil
	case m.free.on:
		m.status = common.Status{Text: fmt.Sprintf("the workers run free: %s stops them, then %s goes back", common.KeyName(m.keys.Free), common.KeyName(m.keys.Back)), Level: common.LevelWarn}
		return m, nil
	case m.finish.on:
		m.status = common.Status{Text: fmt.Sprintf("running to the end at full speed: %s stops it first", common.KeyName(m.keys.Finish)), Level: common.LevelWarn}
		return m, nil
	}
	t, ok := m.track.Line.Back()
	switch act {
	case actPrevMark:
		t, ok = m.track.Line.PrevMark()
	case actNextMark:
		t, ok = m.track.Line.NextMark()
	}
	if !ok {
		m.status = common.Status{Text: m.track.Line.NoTarget(act == actNextMark, m.keys.Step)}
		return m, nil
	}
	m.play.Stop()
	return m.enqueue(op{kind: opGoto, target: t})
}
