// Package question is the question pane: predict, then step. A scenario's script may ask a
// question before a step (engine.Question); space stops there and the lab shows it with its
// answers on the answer keys; the answer runs the step, and the status line says right or
// wrong, and why. e, the free run and leaselab run pass questions by.
//
// While a question is open it is a mode with keys of its own (Keys): only they act, and every
// other key says what to press. The pane keeps the answers given so far, and grades them
// against the history (an answer counts while its step stands) and the run (Grade).
package question

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/history"
)

// MaxLines is how many lines a question, or the answer and its why, may take.
const MaxLines = 4

// maxAnswerKeys is how many answer keys there are (A to D).
const maxAnswerKeys = 4

// Keys are the keys of an open question: the mode in which every other key waits for the
// answer. Only these act then; the lab's q and ? keep their meaning. The answers are capitals
// only: a lower-case a or b is the atomic claim's or step back's key, and waits with the rest
// (a key never does what another label says).
type Keys struct {
	Answer key.Binding // A the first answer, B the second, …
	Skip   key.Binding
	Help   key.Binding // the lab's
	Quit   key.Binding // the lab's
}

// DefaultKeys returns the question's keys, with the lab's help and quit keys.
func DefaultKeys(helpKey, quit key.Binding) Keys {
	return Keys{
		Answer: key.NewBinding(key.WithKeys("A", "B", "C", "D"), key.WithHelp("A–D", "answer it, and the step runs")),
		Skip:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "skip it: the step runs, unscored")),
		Help:   helpKey,
		Quit:   quit,
	}
}

// Letters are the answer keys' names, in the order of the answers: "A", "B", …
func (k Keys) Letters() []string { return k.Answer.Keys()[:maxAnswerKeys] }

// ShortHelp is the question's keys for the footer (help.KeyMap).
func (k Keys) ShortHelp() []key.Binding { return []key.Binding{k.Answer, k.Skip} }

// FullHelp is the question's keys for the ? screen (help.KeyMap).
func (k Keys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Answer, k.Skip, k.Help, k.Quit}}
}

// Pane is the question on screen, the mode's keys, and the answers given so far.
type Pane struct {
	Keys Keys
	Open *engine.Question // waiting for an answer; nil when none
	Long bool             // the status holds a question or its answer: it may take more lines
	step int              // the script step the open question comes before
	// answers are the answers given, by the history position their step started from: an
	// answer counts while the history holds its step before the current position, so that
	// stepping back past it, or a new future that drops it, takes it out of the score, and
	// answering again after a step back replaces it.
	answers map[int]given
	n       int // answers given without a history (their positions)
	// asking is the question being answered now, for its record in answers.
	asking engine.Asked
}

// given is one answer given, and the recorded step it was about.
type given struct {
	right bool
	step  engine.Entry // the history's entry of the step; a new future replaces it
	// asked is the question, the answer picked and the answer the run gave, for the
	// transcript; until asked.Observed is Known the answer waits for its grade (Grade).
	asked engine.Asked
}

// New is the pane with no question asked yet; helpKey and quit are the lab's keys.
func New(helpKey, quit key.Binding) Pane { return Pane{Keys: DefaultKeys(helpKey, quit)} }

// Reset is the pane of a freshly opened scenario: no question, no answers.
func (p Pane) Reset() Pane { return Pane{Keys: p.Keys} }

// ShortHelp is the pane's keys (help.KeyMap).
func (p Pane) ShortHelp() []key.Binding { return p.Keys.ShortHelp() }

// FullHelp is the pane's keys (help.KeyMap).
func (p Pane) FullHelp() [][]key.Binding { return p.Keys.FullHelp() }

// AnswerMsg asks the shell to run the step the open question came before: Answer is the
// answer picked (0 the first), or -1 when the question was skipped.
type AnswerMsg struct{ Answer int }

// Result is what the history part of a command found about questions: a question before the
// step (nothing ran), or an answered question's step that ran.
type Result struct {
	Ask      *engine.Question // the step Next would run has a question: nothing ran
	Step     int              // with Ask: the script step it comes before
	Asked    bool             // an answered question's step ran
	At       int              // the history position the answered step started from
	Observed engine.Observed  // with Asked: the answer the run gave (Known once it is)
}

// Took takes what a command found (r), with the history as it stands after it (t). opened
// reports whether a question has just been opened: the shell stops auto-play and drops the
// steps pressed after the one that found it.
func (p Pane) Took(r Result, t history.Timeline) (_ Pane, opened bool) {
	p.Long = r.Ask != nil || r.Asked
	switch {
	case r.Ask != nil:
		p.Open, p.step = r.Ask, r.Step
		return p, true
	case r.Asked:
		if p.answers == nil {
			p.answers = map[int]given{}
		}
		asked := p.asking
		asked.Observed = r.Observed
		at, g := r.At, given{right: asked.Right(), asked: asked}
		switch {
		case !t.Valid:
			at, p.n = p.n, p.n+1
		case at < len(t.Entries):
			g.step = t.Entries[at]
		}
		p.answers[at] = g
	}
	return p, false
}

// Update takes a key while a question is open. Only the keys that answer it act (A: the first
// answer); esc skips it (the step runs, unscored). Every other key says what to press, and
// does nothing: a lower-case a–d too, which is another key's (a the atomic claim, b step back),
// and says that answers are capitals. The lab's q and ? are the shell's: it takes them before.
// out asks the shell to run the step (an AnswerMsg) or to say something (a common.NoteMsg).
func (p Pane) Update(k tea.KeyMsg, s common.Scene) (_ Pane, out tea.Msg) {
	if key.Matches(k, p.Keys.Skip) {
		p.Open = nil
		return p, AnswerMsg{Answer: -1}
	}
	q := p.Open
	if i := answerIndex(k); i >= 0 && key.Matches(k, p.Keys.Answer) {
		if i >= len(q.Answers) {
			return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("this question has %d answers: %s", len(q.Answers),
				strings.Join(p.Keys.Letters()[:len(q.Answers)], " ")), Level: common.LevelWarn}}
		}
		before := 1
		if s.Frame != nil {
			before = s.Frame.EventCount + 1
		}
		p.asking = engine.Asked{BeforeSeq: before, Step: p.step, Question: q, Picked: i}
		p.Open = nil
		return p, AnswerMsg{Answer: i}
	}
	if answerIndex(k) >= 0 {
		return p, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("%s is not an answer (answers are capitals): %s", k.String(), p.answerFirst()), Level: common.LevelWarn}}
	}
	return p, common.NoteMsg{Status: common.Status{Text: p.answerFirst(), Level: common.LevelWarn}}
}

// answerFirst is what a key that does nothing says while a question is open.
func (p Pane) answerFirst() string {
	keys := p.Keys.Letters()[:len(p.Open.Answers)]
	return fmt.Sprintf("answer first (%s), or %s to skip the question", strings.Join(keys, " "), common.KeyName(p.Keys.Skip))
}

// HelpLines are the ? screen while the question is open: only its keys act, and the screen
// names those alone.
func (p Pane) HelpLines(st *help.Styles, w int) []string {
	k := p.Keys
	keys := k.Letters()[:len(p.Open.Answers)]
	items := []string{
		st.FullKey.Render(strings.Join(keys, " ")) + " " + st.FullDesc.Render(k.Answer.Help().Desc),
		st.FullKey.Render(common.KeyName(k.Skip)) + " " + st.FullDesc.Render(k.Skip.Help().Desc),
		st.FullKey.Render(k.Help.Help().Key) + " " + st.FullDesc.Render("close this screen"),
		st.FullKey.Render(k.Quit.Help().Key) + " " + st.FullDesc.Render(k.Quit.Help().Desc),
		st.FullDesc.Render("every other key waits for the answer; then ? lists them all"),
	}
	return common.Flow(common.Pad("QUESTION", 9), items, st.FullSeparator.Render(" · "), w)
}

// answerIndex is the answer a key names: A (or a) the first, B (or b) the second, …; -1 for
// any other key. Only the capitals answer (Keys.Answer); a lower-case one says so.
func answerIndex(k tea.KeyMsg) int {
	if k.Type != tea.KeyRunes || len(k.Runes) != 1 || k.Alt {
		return -1
	}
	r := k.Runes[0]
	switch {
	case r >= 'a' && r <= 'a'+maxAnswerKeys-1:
		return int(r - 'a')
	case r >= 'A' && r <= 'A'+maxAnswerKeys-1:
		return int(r - 'A')
	}
	return -1
}

// Note is the question with its answers on their keys (letters, in order), for the status line.
func Note(q *engine.Question, letters []string) string {
	parts := make([]string, len(q.Answers))
	for i, a := range q.Answers {
		parts[i] = letters[i] + "\u00a0" + strings.ReplaceAll(a, " ", "\u00a0") // an answer never breaks from its key
	}
	return fmt.Sprintf("PREDICT: %s\n%s", q.Text, strings.Join(parts, " · "))
}

// AnswerNote says whether answer i was right by what the run did (o), and why: once the step
// (or, for a question about the end, the run) is over; until then, that the answer waits.
func AnswerNote(q *engine.Question, o engine.Observed, i int) string {
	var text string
	switch {
	case !o.Known:
		return fmt.Sprintf("answer noted: you said %s; it is graded %s, when what it asks about has happened", q.Answers[i], o.Waiting)
	case o.Right < 0:
		text = fmt.Sprintf("not scored: you said %s; none of the answers describes what happened (%s)", q.Answers[i], o.Words)
	case i == o.Right:
		text = fmt.Sprintf("✓ right: %s", q.Answers[o.Right])
	default:
		text = fmt.Sprintf("✗ not quite: you said %s; it is %s", q.Answers[i], q.Answers[o.Right])
	}
	if o.When != "" {
		text += " (with " + o.When + ")"
	}
	if o.Because != "" {
		text += " — " + o.Because
	}
	return text
}

// SkipNote says why the script's question is not asked under the current settings.
func SkipNote(ans engine.Answer) string {
	return "no question here (with " + ans.When + "): " + ans.Skip
}

// NoQuestion is what an answer key says with no question open; step is the key that steps.
func NoQuestion(answer, step key.Binding) string {
	return fmt.Sprintf("no question is open: %s answer a question when the lab asks one (%s steps to it)",
		answer.Help().Key, common.KeyName(step))
}

// stands reports whether the answer given at history position at counts along the history t:
// the history holds its step before its position (always, without a history). Stepped back past
// it, or a new future that replaced its step, takes it out.
func (g given) stands(t history.Timeline, at int) bool {
	return !t.Valid || at < t.Pos && t.Entries[at].Command == g.step.Command && t.Entries[at].Summary == g.step.Summary
}

// Counted is how many of the answers that count now (along t) are graded and scored, how many
// of them were right, and how many wait for their grade.
func (p Pane) Counted(t history.Timeline) (asked, right, waiting int) {
	for at, g := range p.answers {
		switch o := g.asked.Observed; {
		case !g.stands(t, at):
		case !o.Known:
			waiting++
		case o.Right >= 0:
			asked++
			if g.right {
				right++
			}
		}
	}
	return asked, right, waiting
}

// AskedSoFar are the answers that count now (as Counted has them), in the order they were asked.
func (p Pane) AskedSoFar(t history.Timeline) []engine.Asked {
	var out []engine.Asked
	for at, g := range p.answers {
		if g.stands(t, at) && g.asked.Question != nil {
			out = append(out, g.asked)
		}
	}
	slices.SortFunc(out, func(a, b engine.Asked) int { return a.BeforeSeq - b.BeforeSeq })
	return out
}

// Score is the questions answered so far: "questions 2/3 right"; "" before the first. An
// answer whose grade waits for the end says so.
func (p Pane) Score(t history.Timeline) string {
	asked, right, waiting := p.Counted(t)
	s := ""
	if asked > 0 {
		s = fmt.Sprintf("questions %d/%d right", right, asked)
	}
	if waiting > 0 {
		if s != "" {
			s += " · "
		}
		s += fmt.Sprintf("%d %s graded at the end", waiting, common.Plural(waiting, "answer"))
	}
	return s
}

// Grade grades the answers that stand along t and were waiting for their grade, now that the
// frame f says what the run did (engine.Frame.Observed): a question about the end is graded
// when the run is over, whatever key ended it. notes say so, for the status line, in order.
func (p Pane) Grade(f *common.Frame, t history.Timeline) (_ Pane, notes []string) {
	if f == nil {
		return p, nil
	}
	for at, g := range p.answers {
		if g.asked.Observed.Known || !g.stands(t, at) {
			continue
		}
		for _, o := range f.Observed {
			if o.Step == g.asked.Step && o.Known {
				g.asked.Observed = o
				g.right = g.asked.Right()
				p.answers[at] = g
				notes = append(notes, "at the end: "+AnswerNote(g.asked.Question, o, g.asked.Picked))
			}
		}
	}
	if len(notes) > 0 {
		slices.Sort(notes)
		p.Long = true
	}
	return p, notes
}
