package ui

import (
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
)

// Predict, then step: a scenario's script may ask a question before a step (engine.Question).
// space stops there and shows it with its answers on the answer keys; the answer runs the step,
// and the status line says right or wrong, and why. e, the free run and leaselab run pass
// questions by.

// askState is the question on screen, and the answers given so far.
type askState struct {
	open   *engine.Question // waiting for an answer; nil when none
	expect engine.Answer    // the open question's right answer under the settings now
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
	asked engine.Asked // the question, the answer picked and the right one, for the transcript
}

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

// answerNote says whether answer i was right under the settings the question was answered
// in (ans), and why.
func answerNote(q *engine.Question, ans engine.Answer, i int) string {
	text := fmt.Sprintf("✓ right: %s", q.Answers[ans.Right])
	if i != ans.Right {
		text = fmt.Sprintf("✗ not quite: you said %s; it is %s", q.Answers[i], q.Answers[ans.Right])
	}
	if ans.When != "" {
		text += " (with " + ans.When + ")"
	}
	if ans.Because != "" {
		text += " — " + ans.Because
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
		m.ask.open, m.ask.expect = hx.ask, hx.answer
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
		at, g := hx.at, given{right: hx.right, asked: m.ask.asking}
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

// questionKey takes a key while a question is open. Only the keys that answer it act, in
// lower or upper case (a, A: the first answer); esc skips it (the step runs, unscored); ? shows
// the keys of this mode and esc closes it again; q and ctrl+c still quit. Every other key says
// what to press, and does nothing.
func (m Model) questionKey(k tea.KeyMsg) (Model, tea.Cmd) {
	act, _ := m.keys.match(k)
	switch {
	case act == actQuit:
		return m.do(act, k)
	case act == actHelp:
		m.showHelp = !m.showHelp
		m.relayout()
		return m, nil
	case k.Type == tea.KeyEsc && m.showHelp:
		m.showHelp = false
		m.relayout()
		return m, nil
	case k.Type == tea.KeyEsc:
		m.ask.open = nil
		m.keys.Answer.SetEnabled(false)
		return m.enqueue(op{cmd: engine.CmdNext{}, answered: true, answer: -1})
	}
	q := m.ask.open
	if i := answerIndex(k); i >= 0 {
		if i >= len(q.Answers) {
			m.status = status{text: fmt.Sprintf("this question has %d answers: %s", len(q.Answers),
				strings.Join(answerKeys(m.keys)[:len(q.Answers)], " ")), level: levelWarn}
			return m, nil
		}
		before := 1
		if m.frame != nil {
			before = m.frame.EventCount + 1
		}
		m.ask.asking = engine.Asked{BeforeSeq: before, Question: q, Picked: i, Answer: m.ask.expect}
		m.ask.open, m.ask.picked = nil, i
		m.keys.Answer.SetEnabled(false)
		return m.enqueue(op{cmd: engine.CmdNext{}, answered: true, answer: i})
	}
	m.status = status{text: answerFirst(q, m.keys), level: levelWarn}
	return m, nil
}

// answerFirst is what a key that does nothing says while a question is open.
func answerFirst(q *engine.Question, k KeyMap) string {
	keys := answerKeys(k)[:len(q.Answers)]
	return fmt.Sprintf("answer first (%s, or %s), or %s to skip the question",
		strings.Join(keys, " "), strings.ToLower(strings.Join(keys, " ")), keyName(k.Close))
}

// answerIndex is the answer a key names: a or A the first, b or B the second, …; -1 for any
// other key.
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

// answer takes the press of an answer key with no question open: it says so.
func (m Model) answer(tea.KeyMsg) (Model, tea.Cmd) {
	m.status = status{text: noQuestion(m.keys), level: levelWarn}
	return m, nil
}

// noQuestion is what an answer key says with no question open.
func noQuestion(k KeyMap) string {
	return fmt.Sprintf("no question is open: %s answer a question when the lab asks one (%s steps to it)",
		k.Answer.Help().Key, keyName(k.Step))
}

// counted is how many of the answers count now, and how many of them were right: those whose
// step the history holds before its position (all of them without a history).
func (m Model) counted() (asked, right int) {
	t := m.line
	for at, g := range m.ask.answers {
		if t.valid && (at >= t.pos || t.entries[at].Command != g.step.Command || t.entries[at].Summary != g.step.Summary) {
			continue // stepped back past it, or a new future replaced its step
		}
		asked++
		if g.right {
			right++
		}
	}
	return asked, right
}

// askedSoFar are the answers that count now (as counted does), in the order they were asked.
func (m Model) askedSoFar() []engine.Asked {
	t := m.line
	var out []engine.Asked
	for at, g := range m.ask.answers {
		if t.valid && (at >= t.pos || t.entries[at].Command != g.step.Command || t.entries[at].Summary != g.step.Summary) {
			continue
		}
		if g.asked.Question != nil {
			out = append(out, g.asked)
		}
	}
	slices.SortFunc(out, func(a, b engine.Asked) int { return a.BeforeSeq - b.BeforeSeq })
	return out
}

// score is the questions answered so far: "questions 2/3 right"; "" before the first.
func (m Model) score() string {
	asked, right := m.counted()
	if asked == 0 {
		return ""
	}
	return fmt.Sprintf("questions %d/%d right", right, asked)
}
