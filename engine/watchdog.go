package engine

import (
	"errors"
	"fmt"
)

// ErrNoProgress ends a run that has stopped making progress: its workers keep acting, but no
// message is finalized (a livelock), or it has taken more actions than any run may. A command
// still prints what the run did (the report, the ledgers) and exits 1, as for an unmet
// expectation: the scenario was valid; it did not finish.
var ErrNoProgress = errors.New("the run made no progress")

// Bounds on what one session may do, whatever its script asks. They count actions, never
// wall-clock time: the engine has no wall clock, and a count gives the same answer on every
// machine.
const (
	// stallActions is how many actions of run steps may follow one another without a finalize
	// committing. A healthy run commits every few actions (every lesson, each way, stays far below).
	stallActions = 10_000
	// maxSessionActions bounds every action of a session together: a million messages need
	// about four million.
	maxSessionActions = 10_000_000
)

// endStalled ends the script where err (ErrNoProgress) stopped it, as RunToEnd stops there, and
// keeps in words why it did not finish, for the summary (Summary.DidNotFinish).
func (s *Session) endStalled(err error) {
	s.pc, s.inStep, s.stepN = len(s.Scenario.Steps), false, 0
	s.stalled = err.Error()
	if s.sinceProgress >= stallActions {
		s.stalled = fmt.Sprintf("watchdog after %d actions without a commit (%d finalized in all)", s.sinceProgress, s.progressCommits)
	}
}

// watchdog is called after each action of a run step (run, A run): it ends the run when no
// finalize has committed for stallActions actions, or when the session has taken
// maxSessionActions.
func (s *Session) watchdog() error {
	if c, _ := s.ledger.progress(); c != s.progressCommits {
		s.progressCommits, s.sinceProgress = c, 0
	} else {
		s.sinceProgress++
	}
	switch {
	case s.sinceProgress >= stallActions:
		return fmt.Errorf("%w: no message finalized in the last %d actions (%d finalized in all); "+
			"workers interrupted too often, or a lease shorter than the work, keep any from finishing", ErrNoProgress, stallActions, s.progressCommits)
	case s.actions >= maxSessionActions:
		return fmt.Errorf("%w: the session has taken %d actions, the most any run may take", ErrNoProgress, s.actions)
	}
	return nil
}
