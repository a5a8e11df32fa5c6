package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Predict, then step: a scenario's script may ask a question before a step (engine.Question).
// space stops there and shows it with its answers on the answer keys; the answer runs the step,
// and the status line says right or wrong, and why. e, the free run and leaselab run pass
// questions by.

// askState is the question pane: the question on screen, a mode with keys of its own
// (askKeys), and the answers given so far.
type askState struct {
	keys   askKeys
	open   *engine.Question // waiting for an answer; nil when none
	step   int              // the script step the open question comes before
	picked int              // the answer being run
	long   bool             // the status holds a question or its answer: it may take more lines
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
	// transcript; until asked.Observed is Known the answer waits for its grade (gradeLate).
	asked engine.Asked
}

// newAskState is the pane with no question asked yet.
func newAskState() askState { return askState{keys: defaultAskKeys()} }

// ShortHelp is the pane's keys (help.KeyMap).
func (a askState) ShortHelp() []key.Binding { return a.keys.ShortHelp() }

// FullHelp is the pane's keys (help.KeyMap).
func (a askState) FullHelp() [][]key.Binding { return a.keys.FullHelp() }

// maxAskLines is how many lines a question, or the answer and its why, may take.
const maxAskLines = 4

// answerKeys are the names of the answer keys, in the order of the answers: "A", "B", …
func answerKeys(k KeyMap) []string { return k.Answer.Keys() }

// askNote is the question with its answers on their keys, for the status line.
func askNote(q *engine.Question, k KeyMap) string {
	keys := answerKeys(k)
	parts := make([]string, len(q.Answers))
	for i, a := range q.Answers {
		parts[i] = keys[i] + "\u00a0" + strings.ReplaceAll(a, " ", "\u00a0") // an answer never breaks from its key
	}
	return fmt.Sprintf("PREDICT: %s\n%s", q.Text, strings.Join(parts, " · "))
}

// answerNote says whether answer i was right by what the run did (o), and why: once the step
// (or, for a question about the end, the run) is over; until then, that the answer waits.
func answerNote(q *engine.Question, o engine.Observed, i int) string {
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

// skipNote says why the script's question is not asked under the current settings.
func skipNote(ans engine.Answer) string {
	return "no question here (with " + ans.When + "): " + ans.Skip
}

// askResult takes what the history part of a command said about questions.
func (m Model) askResult(hx histResult) Model {
	m.ask.long = hx.ask != nil || hx.asked
	switch {
	case hx.ask != nil:
		m.ask.open, m.ask.step = hx.ask, hx.askStep
		m.play.stop() // auto-play waits for the answer too
		// Steps pressed after the one that found the question would run past it.
		q := m.queue[:0]
		for _, o := range m.queue {
			if !o.isStep() {
				q = append(q, o)
			}
		}
		m.queue = q
	case hx.asked:
		if m.ask.answers == nil {
			m.ask.answers = map[int]given{}
		}
		asked := m.ask.asking
		asked.Observed = hx.observed
		at, g := hx.at, given{right: asked.Right(), asked: asked}
		switch t := hx.timeline; {
		case !t.valid:
			at, m.ask.n = m.ask.n, m.ask.n+1
		case at < len(t.entries):
			g.step = t.entries[at]
		}
		m.ask.answers[at] = g
	}
	m.keys.Answer.SetEnabled(m.ask.open != nil)
	return m
}

// Update takes a key while a question is open. Only the keys that answer it act (A: the first
// answer); esc skips it (the step runs, unscored); q and ? are the lab's (out is an actMsg for
// them). Every other key says what to press, and does nothing: a lower-case a–d too, which is
// another key's (a the atomic claim, b step back), and says that answers are capitals.
// out asks the shell to run the step (an opMsg), to say something (a common.NoteMsg) or to act.
func (a askState) Update(k tea.KeyMsg, s common.Scene) (_ askState, out tea.Msg) {
	switch {
	case key.Matches(k, a.keys.Quit):
		return a, actMsg{actQuit}
	case key.Matches(k, a.keys.Help):
		return a, actMsg{actHelp}
	case key.Matches(k, a.keys.Skip):
		a.open = nil
		return a, opMsg{op{cmd: engine.CmdNext{}, answered: true, answer: -1}}
	}
	q := a.open
	if i := answerIndex(k); i >= 0 && key.Matches(k, a.keys.Answer) {
		if i >= len(q.Answers) {
			return a, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("this question has %d answers: %s", len(q.Answers),
				strings.Join(a.keys.letters()[:len(q.Answers)], " ")), Level: common.LevelWarn}}
		}
		before := 1
		if s.Frame != nil {
			before = s.Frame.EventCount + 1
		}
		a.asking = engine.Asked{BeforeSeq: before, Step: a.step, Question: q, Picked: i}
		a.open, a.picked = nil, i
		return a, opMsg{op{cmd: engine.CmdNext{}, answered: true, answer: i}}
	}
	if answerIndex(k) >= 0 {
		return a, common.NoteMsg{Status: common.Status{Text: fmt.Sprintf("%s is not an answer (answers are capitals): %s", k.String(), a.answerFirst()), Level: common.LevelWarn}}
	}
	return a, common.NoteMsg{Status: common.Status{Text: a.answerFirst(), Level: common.LevelWarn}}
}

// answerFirst is what a key that does nothing says while a question is open.
func (a askState) answerFirst() string {
	keys := a.keys.letters()[:len(a.open.Answers)]
	return fmt.Sprintf("answer first (%s), or %s to skip the question", strings.Join(keys, " "), common.KeyName(a.keys.Skip))
}

// helpLines are the ? screen while the question is open: only its keys act, and the screen
// names those alone.
func (a askState) helpLines(st *help.Styles, w int) []string {
	keys := a.keys.letters()[:len(a.open.Answers)]
	items := []string{
		st.FullKey.Render(strings.Join(keys, " ")) + " " + st.FullDesc.Render(a.keys.Answer.Help().Desc),
		st.FullKey.Render(common.KeyName(a.keys.Skip)) + " " + st.FullDesc.Render(a.keys.Skip.Help().Desc),
		st.FullKey.Render(a.keys.Help.Help().Key) + " " + st.FullDesc.Render("close this screen"),
		st.FullKey.Render(a.keys.Quit.Help().Key) + " " + st.FullDesc.Render(a.keys.Quit.Help().Desc),
		st.FullDesc.Render("every other key waits for the answer; then ? lists them all"),
	}
	return common.Flow(common.Pad("QUESTION", 9), items, st.FullSeparator.Render(" · "), w)
}

// answerIndex is the answer a key names: A (or a) the first, B (or b) the second, …; -1 for
// any other key. Only the capitals answer (askKeys.Answer); a lower-case one says so.
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

// maxAnswerKeys is how many answer keys there are (A to D).
const maxAnswerKeys = 4

// noQuestion is what an answer key says with no question open.
func noQuestion(k KeyMap) string {
	return fmt.Sprintf("no question is open: %s answer a question when the lab asks one (%s steps to it)",
		k.Answer.Help().Key, common.KeyName(k.Step))
}

// stands reports whether the answer given at history position at counts along the history t:
// the history holds its step before its position (always, without a history). Stepped back past
// it, or a new future that replaced its step, takes it out.
func (g given) stands(t timeline, at int) bool {
	return !t.valid || at < t.pos && t.entries[at].Command == g.step.Command && t.entries[at].Summary == g.step.Summary
}

// counted is how many of the answers that count now (stands) are graded and scored, how many
// of them were right, and how many wait for their grade.
func (a askState) counted(t timeline) (asked, right, waiting int) {
	for at, g := range a.answers {
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

// askedSoFar are the answers that count now (as counted does), in the order they were asked.
func (a askState) askedSoFar(t timeline) []engine.Asked {
	var out []engine.Asked
	for at, g := range a.answers {
		if g.stands(t, at) && g.asked.Question != nil {
			out = append(out, g.asked)
		}
	}
	slices.SortFunc(out, func(a, b engine.Asked) int { return a.BeforeSeq - b.BeforeSeq })
	return out
}

// score is the questions answered so far: "questions 2/3 right"; "" before the first. An
// answer whose grade waits for the end says so.
func (a askState) score(t timeline) string {
	asked, right, waiting := a.counted(t)
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

// gradeLate grades the answers that stand and were waiting for their grade, now that the frame
// f says what the run did (engine.Frame.Observed), and says so in the status line: a question
// about the end is graded when the run is over, whatever key ended it.
func (m Model) gradeLate(f *common.Frame) Model {
	if f == nil {
		return m
	}
	var notes []string
	for at, g := range m.ask.answers {
		if g.asked.Observed.Known || !g.stands(m.line, at) {
			continue
		}
		for _, o := range f.Observed {
			if o.Step == g.asked.Step && o.Known {
				g.asked.Observed = o
				g.right = g.asked.Right()
				m.ask.answers[at] = g
				notes = append(notes, "at the end: "+answerNote(g.asked.Question, o, g.asked.Picked))
			}
		}
	}
	if len(notes) > 0 {
		slices.Sort(notes)
		m.status = common.Status{Text: strings.Join(append(notes, m.status.Text), " · "), Level: m.status.Level}
		m.ask.long = true
	}
	return m
}
