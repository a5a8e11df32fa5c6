package plain

import (
	"context"
	"fmt"
	"strings"

	"leaselab/engine"
)

// Predict, then step: the script may ask a question before a step. Space stops there and
// reads it with its answers on their keys; the answer runs the step, and plain mode says
// whether it was right and why, as the run graded it (engine.Observed), once it knows.

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
