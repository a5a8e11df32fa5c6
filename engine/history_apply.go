package engine

import (
	"context"
	"fmt"
)

// apply does move m on s, as the lab's key did it the first time. after is where the move
// ended the first time: a chunk of a run to the end calls Next until the session stands there.
func (s *Session) apply(ctx context.Context, m Move, after mark) error {
	var err error
	switch m.Kind {
	case MoveNext:
		_, err = s.Next(ctx)
	case MoveStepWorker:
		_, _, err = s.StepWorker(ctx, m.Worker)
	case MoveCrash:
		_, err = s.Crash(m.Worker)
	case MoveRestart:
		_, err = s.Restart(ctx, m.Worker)
	case MovePause:
		_, err = s.SetPaused(m.Worker, m.On)
	case MoveToggle:
		_, err = s.SetToggle(m.Name, m.On)
	case MoveClock:
		s.AdvanceClock(m.Delta)
	case MovePastLease:
		_, err = s.ClockPastLease(ctx)
	case MoveFinish:
		s.FinishSteps()
		for s.here() != after && !s.ScriptDone() && s.actions <= after.actions {
			if _, err = s.Next(ctx); err != nil {
				break
			}
		}
	default:
		return fmt.Errorf("move %d: %w", m.Kind, ErrNotReplayable)
	}
	return err
}

// FinishSteps gives a scenario with no script the one step a run to the end runs, "run
// until-done", as RunToEnd does. The lab's e calls it before its first Next.
func (s *Session) FinishSteps() {
	if len(s.Scenario.Steps) == 0 {
		s.Scenario.Steps = []Step{{Kind: StepRun, UntilDone: true}}
	}
}

// NextQuestion returns the question of the script step Next would start now; nil when there is
// none, or the step has already begun.
func (s *Session) NextQuestion() *Question {
	if s.inStep || s.ScriptDone() {
		return nil
	}
	return s.Scenario.Steps[s.pc].Ask
}

// AnswerFor is question q's answer under the session's settings: those in force now, and
// those the run started with.
func (s *Session) AnswerFor(q *Question) Answer { return q.For(s.Settings(), s.InitialSettings()) }
