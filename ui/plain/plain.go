// Package plain is leaselab --plain: the lab for a screen reader, a braille display or a log.
// It drives the same engine session as the lab with the same keys, and prints what each key
// changed as sentences, appended once and never redrawn: the events, the rows that changed with
// their Status, LockedBy and LockedUntilUtc, the question and its answers when one opens, and
// at the end the checks and the verdict. ASCII only: no escape sequence, no box drawing, no
// spinner, no alternate screen.
package plain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	xterm "github.com/charmbracelet/x/term"

	"leaselab/engine"
	"leaselab/engine/words"
	"leaselab/ui/common"
)

// Config is what plain mode needs.
type Config struct {
	// Start is the scenario to open: a built-in name or a file.
	Start string
	// Open builds a fresh session for a scenario on a fresh database, closing the previous
	// one: the lab's own (ui.Config.Open). Stepping back opens it again and replays.
	Open func(ctx context.Context, nameOrFile string) (*engine.Session, error)
	// In gives the keys: a terminal (single keys, read raw) or anything else (one key a line).
	In io.Reader
	// Out is where the sentences go.
	Out io.Writer
}

// Run opens cfg.Start, says what it is, and then, for each key, what it changed, until q,
// ctrl+c, the end of the input or ctx's end. An error that is not the user's (the database
// failed) ends it.
func Run(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &printer{w: cfg.Out}
	l, err := open(ctx, cfg, p)
	if err != nil {
		return err
	}
	intro(p, l.f, l.keys)
	in := make(chan press)
	if f, ok := cfg.In.(*os.File); ok && xterm.IsTerminal(f.Fd()) {
		// Single keys: no echo, no line editing. Raw mode also stops a newline from returning
		// the carriage on the terminal, so the printer writes "\r\n" to it from now on.
		st, err := xterm.MakeRaw(f.Fd())
		if err != nil {
			return fmt.Errorf("plain: read single keys from the terminal: %w", err)
		}
		defer xterm.Restore(f.Fd(), st) //nolint:errcheck // the terminal as it was, at best
		// Only output to a terminal needs it: a log file (leaselab --plain | tee) keeps "\n".
		out, ok := cfg.Out.(*os.File)
		p.crlf = ok && xterm.IsTerminal(out.Fd())
		go readRaw(ctx, f, in)
	} else {
		go readLines(ctx, cfg.In, in)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case k, ok := <-in:
			if !ok {
				p.line("End of input: leaving the lab.")
				return p.err
			}
			quit, err := l.handle(ctx, k)
			if err != nil {
				return err
			}
			if quit || p.err != nil {
				return p.err
			}
		}
	}
}

// open opens cfg.Start and reads its first frame.
func open(ctx context.Context, cfg Config, p *printer) (*lab, error) {
	l := &lab{run: run{open: cfg.Open, name: cfg.Start}, keys: defaultKeys(), p: p}
	if err := l.run.start(ctx); err != nil {
		return nil, err
	}
	f, err := l.run.frame(ctx)
	if err != nil {
		return nil, err
	}
	l.f = f
	return l, nil
}

// lab is plain mode's state: the run, the last frame it said, the selected worker and the open
// question.
type lab struct {
	run      run
	keys     keys
	p        *printer
	f        *common.Frame
	selected int
	ask      *asking // the question waiting for its answer; nil when none
	graded   []asked // answers given, each until its grade has been said
}

// asking is a question that waits for its answer.
type asking struct {
	q    *engine.Question
	step int // the script step it comes before
}

// asked is an answer given, and the script step its question came before.
type asked struct {
	q      *engine.Question
	step   int
	picked int
	waits  bool // its grade waits (for the end of the run), and that has been said
}

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

// step is the script's next step (space): it stops at a question, which the answer runs.
func (l *lab) step(ctx context.Context, c engine.Command) error {
	q, ans, step := l.run.question()
	switch {
	case q != nil && ans.Skip != "":
		l.p.line("No question here (with %s): %s.", ans.When, strings.TrimSuffix(ans.Skip, "."))
	case q != nil:
		l.ask = &asking{q: q, step: step}
		l.p.line("Question: %s", q.Text)
		for i, a := range q.Answers {
			l.p.line("  %s: %s", l.keys.lab.Answer.Keys()[i], a)
		}
		l.p.line("Answer with %s, or %s to skip the question.", answerKeys(l.keys, len(q.Answers)), l.keys.lab.Close.Help().Key)
		return nil
	}
	return l.do(ctx, c)
}

func answerKeys(k keys, n int) string { return strings.Join(k.lab.Answer.Keys()[:n], ", ") }

// answer takes a key while a question is open: an answer runs the step, esc skips the question
// (the step runs, unscored), any other key waits.
func (l *lab) answer(ctx context.Context, name string) error {
	a := l.ask
	i := l.keys.answer(name)
	switch {
	case is(l.keys.lab.Close, name):
		l.ask = nil
		l.p.line("Question skipped.")
		return l.do(ctx, engine.CmdNext{})
	case i < 0 || i >= len(a.q.Answers):
		l.p.line("Answer first (%s), or %s to skip the question.", answerKeys(l.keys, len(a.q.Answers)), l.keys.lab.Close.Help().Key)
		return nil
	}
	l.ask = nil
	l.p.line("You answered %s: %s.", name, a.q.Answers[i])
	l.graded = append(l.graded, asked{q: a.q, step: a.step, picked: i})
	return l.do(ctx, engine.CmdNext{})
}

// grades says the grade of each answer whose grade the run now knows, and once, of one that
// waits, when it will be graded. It reports whether it said anything.
func (l *lab) grades() bool {
	said := false
	kept := l.graded[:0]
	for _, g := range l.graded {
		o := l.run.observed(g.step)
		switch {
		case o.Known:
			l.p.line("%s", gradeWords(g, o))
			said = true
			continue
		case !g.waits:
			l.p.line("Your answer, %s, is graded %s.", g.q.Answers[g.picked], o.Waiting)
			g.waits, said = true, true
		}
		kept = append(kept, g)
	}
	l.graded = kept
	return said
}

// gradeWords says whether answer g was right by what the run did (o), and why.
func gradeWords(g asked, o engine.Observed) string {
	var text string
	switch {
	case o.Right < 0:
		text = fmt.Sprintf("Not scored: you said %s; none of the answers describes what happened (%s)", g.q.Answers[g.picked], o.Words)
	case g.picked == o.Right:
		text = "Right: " + g.q.Answers[o.Right]
	default:
		text = fmt.Sprintf("Not quite: you said %s; it is %s", g.q.Answers[g.picked], g.q.Answers[o.Right])
	}
	if o.When != "" {
		text += " (with " + o.When + ")"
	}
	if o.Because != "" {
		text += ". " + strings.TrimSuffix(o.Because, ".")
	}
	return text + "."
}

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
		l.p.line("%s.", strings.TrimSuffix(words.Escape(refusal(err)), "."))
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
		l.p.line("%s.", strings.TrimSuffix(words.Escape(refusal(err)), "."))
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
