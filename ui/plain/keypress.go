package plain

import (
	"context"
	"fmt"

	"leaselab/engine"
)

// handle does what key k asks and says what it changed. It reports whether to quit.
func (l *lab) handle(ctx context.Context, k press) (quit bool, err error) {
	lk, name := l.keys.lab, k.name
	switch {
	case k.bad != "":
		l.p.line("%q is not a key: one key a line, as the lab names it (a character, space, left, right, esc); ? lists them.", k.bad)
		return false, nil
	case is(lk.Quit, name):
		l.p.line("Leaving the lab.")
		return true, nil
	case is(lk.Help, name):
		l.help()
		return false, nil
	case l.ask != nil:
		return false, l.answer(ctx, name)
	case is(l.keys.wk.Select, name):
		l.selectWorker(int(name[0] - '1'))
		return false, nil
	case is(l.keys.wk.PrevWorker, name):
		l.selectWorker((l.selected - 1 + len(l.f.Workers)) % len(l.f.Workers))
		return false, nil
	case is(l.keys.wk.NextWorker, name):
		l.selectWorker((l.selected + 1) % len(l.f.Workers))
		return false, nil
	case is(lk.Back, name):
		return false, l.back(ctx)
	case is(l.keys.redrive, name):
		return false, l.redrive(ctx)
	case is(lk.Explain, name):
		about(l.p, l.f)
		state(l.p, l.f, l.selected)
		return false, nil
	case l.keys.answer(name) >= 0:
		l.p.line("No question is open: %s answer a question when the lesson asks one (%s steps to it).", lk.Answer.Help().Key, lk.Step.Help().Key)
		return false, nil
	}
	if c, ok := l.keys.workerCommand(name, l.selected); ok {
		return false, l.do(ctx, c)
	}
	if c, ok := l.keys.lab.Command(name); ok {
		if t := c.Info().Toggle; t != "" && !toggleOn(t, l.f.RowLocks, l.f.LessonToggles) {
			l.p.line("%s switches %s, %s: nothing changed.", name, t, whyNoToggle(t))
			return false, nil
		}
		if c.Info().Step && c.Info().Worker < 0 {
			return false, l.step(ctx, c)
		}
		return false, l.do(ctx, c)
	}
	l.p.line("%s does nothing in plain mode; %s lists the keys.", keyWords(name), lk.Help.Help().Key)
	return false, nil
}

// whyNoToggle says why a toggle is not one of this run's.
func whyNoToggle(name string) string {
	if t, ok := engine.LookupToggle(name); ok && t.RowLocks {
		return "which only a database with row locks (PostgreSQL) has"
	}
	return "which this lesson does not use"
}

// keyWords names a key for a sentence: "space", "tab", "g".
func keyWords(name string) string {
	if name == " " {
		return "space"
	}
	return name
}

// help prints the keys that act now.
func (l *lab) help() {
	l.p.line("Keys:")
	for _, line := range l.keys.helpLines(l.f.RowLocks, l.f.LessonToggles, l.ask != nil) {
		l.p.line("  %s", line)
	}
}

// selectWorker selects worker i and says what it is doing.
func (l *lab) selectWorker(i int) {
	if i < 0 || i >= len(l.f.Workers) {
		l.p.line("No worker %d: this scenario has %d.", i+1, len(l.f.Workers))
		return
	}
	l.selected = i
	l.p.line("Selected %s: %s.", l.f.Workers[i].Name, workerWords(l.f.Workers[i]))
}

// workerWords is a worker's state and what it holds in memory.
func workerWords(v engine.WorkerView) string {
	s := v.State
	switch {
	case v.Crashed:
		s += ", its memory lost"
	case v.Holding != "" && v.HoldingVersion > 0:
		s += fmt.Sprintf(", holds %s (lease version %d)", v.Holding, v.HoldingVersion)
	case v.Holding != "":
		s += ", holds " + v.Holding
	}
	if v.Queue > 0 {
		s += fmt.Sprintf(", %d more loaded", v.Queue)
	}
	return s
}
