package plain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"leaselab/engine"
	"leaselab/engine/words"
	"leaselab/ui/common"
)

// do carries out c, then says what changed.
func (l *lab) do(ctx context.Context, c engine.Command) error {
	res, err := l.run.do(ctx, c)
	switch {
	case errors.Is(err, engine.ErrNoWorker):
		l.p.line("No worker %d: this scenario has %d.", c.Info().Worker+1, len(l.f.Workers))
		return nil
	case errors.Is(err, engine.ErrNoLiveLease):
		l.p.line("No live lease at %s: %s moves the clock just past the earliest LockedUntilUtc of a Processing row.",
			engine.FormatClock(l.f.Now), l.keys.lab.PastLease.Help().Key)
		return nil
	case err != nil && notNow(err):
		l.p.line("%s.", strings.TrimSuffix(words.Escape(common.Refusal(err)), "."))
		return nil
	case err != nil:
		return err
	case res.Busy:
		l.p.line("The database stayed busy; nothing happened: try again.")
		return nil
	}
	if err := l.tell(ctx, c.Info().Worker, c.Info().Step && !res.Acted); err != nil {
		return err
	}
	if name := c.Info().Toggle; name != "" {
		l.toggled(name)
	}
	return nil
}

// parked says, after frame prev, the rows that have become dead letters since, and that V
// redrives them (the lab's dead letters line).
func (l *lab) parked(prev *common.Frame) {
	was := make(map[string]bool, len(prev.Rows))
	for _, r := range prev.Rows {
		was[r.IdempotencyKey] = r.Status == engine.StatusDeadLettered
	}
	var keys []string
	for _, r := range l.f.Rows {
		if r.Status == engine.StatusDeadLettered && !was[r.IdempotencyKey] {
			keys = append(keys, r.IdempotencyKey)
		}
	}
	if len(keys) > 0 {
		l.p.line("Dead-lettered: %s, parked, never claimed again; %s redrives %s (back to Pending, attempts reset).",
			strings.Join(keys, ", "), l.keys.redrive.Help().Key, map[bool]string{true: "it", false: "them one a press"}[len(keys) == 1])
	}
}

// toggled says what a toggle's new setting makes the workers do, in the registry's words (the
// lab's status line says the same).
func (l *lab) toggled(name string) {
	t, ok := engine.LookupToggle(name)
	if !ok {
		return
	}
	on, effect := t.Of(l.f.Settings), t.Off
	if on {
		effect = strings.Replace(t.On, "heartbeat-every", l.f.Settings.HeartbeatEvery.String(), 1)
	}
	l.p.line("With %s %s: %s.", name, engine.OnOff(on), strings.TrimSuffix(effect, "."))
	if name != engine.ToggleLeasing && !l.f.Settings.Leasing {
		l.p.line("(It has no effect while leasing is off.)")
	}
}

// tell reads the frame after a command and says what changed from the last; idle says the
// command was a step that did nothing, of worker w (-1: the script's next step).
func (l *lab) tell(ctx context.Context, w int, idle bool) error {
	f, err := l.run.frame(ctx)
	if err != nil {
		return err
	}
	prev := l.f
	l.f = f
	l.p.line("%s:", stepWords(l.run.position()))
	said := changes(l.p, prev, f)
	l.parked(prev)
	said = l.grades() || said
	if ended(prev, f) {
		verdict(l.p, f)
		said = true
	}
	if !said {
		l.p.line("%s", whyNothing(f, l.keys, w, idle))
	}
	return nil
}

// back steps back one recorded move: the database rebuilt as it was.
func (l *lab) back(ctx context.Context) error {
	err := l.run.back(ctx)
	switch {
	case err != nil && notNow(err):
		l.p.line("%s.", strings.TrimSuffix(words.Escape(common.Refusal(err)), "."))
		return nil
	case err != nil:
		return err
	}
	l.ask, l.graded = nil, nil // an answer stepped back past is no longer graded
	pos, total := l.run.position()
	l.p.line("Back at step %d of %d: the database as it was, rebuilt by replaying the recorded steps; %s goes along the recorded future, any other move starts a new one.",
		pos, total, l.keys.lab.Step.Help().Key)
	f, err := l.run.frame(ctx)
	if err != nil {
		return err
	}
	prev := l.f
	l.f = f
	if !rows(l.p, prev, f) {
		l.p.line("No row changed.")
	}
	return nil
}

// whyNothing says, from the frame read after a key that changed nothing, why nothing could
// happen and what to press; idle says it was a step that did nothing (of worker w, for s).
func whyNothing(f *common.Frame, k keys, w int, idle bool) string {
	now := engine.FormatClock(f.Now)
	live := 0
	for _, v := range f.Workers {
		if !v.Crashed && !v.Paused {
			live++
		}
	}
	switch {
	case f.Done:
		verdict := "VERDICT: FAIL"
		if f.Summary != nil && f.Summary.Passed {
			verdict = "VERDICT: PASS"
		}
		return fmt.Sprintf("The scenario is done (%s): %s steps back, %s quits.", verdict, k.lab.Back.Help().Key, k.lab.Quit.Help().Key)
	case !idle:
		return "Nothing changed."
	case live == 0:
		return fmt.Sprintf("Nothing can act at %s: every worker is crashed or paused (%s restarts, %s wakes the selected one).",
			now, k.wk.Restart.Help().Key, k.wk.Pause.Help().Key)
	case w >= 0 && w < len(f.Workers) && f.Workers[w].Crashed:
		return fmt.Sprintf("%s is CRASHED: %s restarts it.", f.Workers[w].Name, k.wk.Restart.Help().Key)
	case w >= 0 && w < len(f.Workers) && f.Workers[w].Paused:
		return fmt.Sprintf("%s is PAUSED: %s wakes it.", f.Workers[w].Name, k.wk.Pause.Help().Key)
	case !f.EarliestLease().IsZero():
		return fmt.Sprintf("Nothing to do at %s: the live leases block every claim; %s moves the clock past the earliest (%s).",
			now, k.lab.PastLease.Help().Key, engine.FormatClock(f.EarliestLease()))
	case !f.NextTimer.IsZero():
		return fmt.Sprintf("Nothing to do at %s: the next thing happens at %s; %s moves the clock.",
			now, engine.FormatClock(f.NextTimer), k.lab.Clock.Help().Key)
	}
	return fmt.Sprintf("Nothing to do at %s.", now)
}

// stepWords names where the history stands: "Step 7", or "Step 6 of 7" in the past.
func stepWords(pos, total int) string {
	if pos < total {
		return fmt.Sprintf("Step %d of %d", pos, total)
	}
	return fmt.Sprintf("Step %d", pos)
}

// redrive is V, as in the lab's dead letters pane: the guarded redrive (engine.CmdRedrive) of
// the first dead-lettered row in the table's order after the one V redrove last, or else of the
// first; then what changed. Each press takes the next, so that every dead letter can be chosen.
func (l *lab) redrive(ctx context.Context) error {
	after := slices.IndexFunc(l.f.Rows, func(r engine.Row) bool { return r.IdempotencyKey == l.redrove })
	target := ""
	for i, r := range l.f.Rows {
		if r.Status == engine.StatusDeadLettered && (target == "" || i > after) {
			target = r.IdempotencyKey
			if i > after {
				break
			}
		}
	}
	if target == "" {
		l.p.line("No row is DeadLettered: %s redrives a dead letter once one is parked; nothing changed.", l.keys.redrive.Help().Key)
		return nil
	}
	l.redrove = target
	return l.do(ctx, engine.CmdRedrive{Key: target})
}
