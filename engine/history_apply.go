package engine

import "context"

// redo does command c on s again, as the lab's key did it the first time. after is where it
// ended the first time: a CmdFinish of a scenario with no script calls Next until the session
// stands there.
func (s *Session) redo(ctx context.Context, c Command, after mark) error {
	if _, ok := c.(CmdFinish); !ok {
		_, err := s.Do(ctx, c)
		return err
	}
	s.FinishSteps()
	for s.here() != after && !s.ScriptDone() && s.actions <= after.actions {
		if _, err := s.Next(ctx); err != nil {
			return err
		}
	}
	return nil
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
