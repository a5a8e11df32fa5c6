package plain

import (
	"context"
	"errors"
	"fmt"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Every call plain mode makes on an engine.Session is in this file: open a scenario, do a
// command (recorded in the history), read a frame, ask the script's next question, read the
// grade of an answer, step back. The lab does the same through its own runner (ui/queue.go).

// run is the open scenario: its session and the history that records its commands.
type run struct {
	open func(ctx context.Context, nameOrFile string) (*engine.Session, error)
	name string
	sess *engine.Session
	hist *engine.History
}

// start opens the scenario on a fresh database, with a history that rebuilds it on another.
func (r *run) start(ctx context.Context) error {
	s, err := r.open(ctx, r.name)
	if err != nil {
		return err
	}
	r.sess = s
	r.hist = engine.NewHistory(s, func(ctx context.Context) (*engine.Session, error) { return r.open(ctx, r.name) })
	return nil
}

// do carries out c and records it in the history.
func (r *run) do(ctx context.Context, c engine.Command) (engine.Result, error) {
	p := r.hist.Begin()
	res, err := r.sess.Do(ctx, c)
	r.hist.Commit(c, p, res.Acted)
	return res, err
}

// frame reads the session back (the rows from the database, escaped), with the latest events.
func (r *run) frame(ctx context.Context) (*common.Frame, error) { return common.Capture(ctx, r.sess) }

// question is the script's question before the step space would run next, nil when none; with
// it, its answer under the settings of this moment (Skip says why it is not asked) and the
// script step it comes before.
func (r *run) question() (*engine.Question, engine.Answer, int) {
	q := r.sess.Script().NextQuestion()
	if q == nil {
		return nil, engine.Answer{}, 0
	}
	_, step, _ := r.sess.Script().Position()
	return q, q.For(r.sess.Settings(), r.sess.InitialSettings()), step
}

// observed is what the run answered to the question before script step step, once known.
func (r *run) observed(step int) engine.Observed {
	o, _ := r.sess.Script().Observed(step)
	return o
}

// position is where the history stands: moves applied, and moves recorded.
func (r *run) position() (pos, total int) { return r.hist.Pos(), r.hist.Len() }

// back rebuilds the database as it was one recorded move ago.
func (r *run) back(ctx context.Context) error {
	if r.hist.Pos() == 0 {
		return fmt.Errorf("at the start: nothing to step back to: %w", engine.ErrNotNow)
	}
	s, err := r.hist.Goto(ctx, r.hist.Pos()-1)
	if s != nil {
		r.sess = s
	}
	return err
}

// notNow reports whether err is a refusal (the command is not possible now), not a failure.
func notNow(err error) bool { return errors.Is(err, engine.ErrNotNow) }
