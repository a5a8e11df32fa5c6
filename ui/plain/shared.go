package plain

import (
	"context"
	"strings"

	"leaselab/engine"
	"leaselab/engine/share"
	"leaselab/engine/words"
	"leaselab/ui/checks"
	"leaselab/ui/common"
)

// replay makes a share code's moves on the scenario just opened, each recorded in the history
// as the lab records a key's (share.Replay), and says the moment they lead to: the lesson, that
// it was opened from a code with so many moves, the settings, workers and rows as they stand,
// and the checks that already fail (or, at the run's end, the verdict). A move that cannot be
// made again stops the replay where it is, and says so, as the lab's status line does.
func (l *lab) replay(ctx context.Context, moves []engine.Command) error {
	err := share.Replay(ctx, l.run.hist, moves)
	f, ferr := l.run.frame(ctx)
	if ferr != nil {
		return ferr
	}
	l.f = f
	about(l.p, f)
	pos, _ := l.run.position()
	if err != nil {
		l.p.line("The share code's moves stopped at step %d: %s.", pos, strings.TrimSuffix(words.Escape(err.Error()), "."))
	} else {
		l.p.line("Opened from a share code: its %d %s made again, on this database; %s steps back through them, %s steps on.",
			len(moves), common.Plural(len(moves), "move"), l.keys.lab.Back.Help().Key, l.keys.lab.Step.Help().Key)
	}
	l.p.line("%s:", stepWords(l.run.position()))
	state(l.p, f, l.selected)
	if f.Done {
		verdict(l.p, f)
	} else {
		for _, c := range checks.Classify(f) {
			if c.State == checks.Fails {
				l.p.line("Check FAILS already: %s: %s.", c.Name, strings.TrimSuffix(c.Detail, "."))
			}
		}
	}
	l.p.line("Press %s to step, %s for the keys, %s to quit.", l.keys.lab.Step.Help().Key, l.keys.lab.Help.Help().Key, l.keys.lab.Quit.Help().Key)
	return nil
}
