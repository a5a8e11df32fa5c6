package ui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
)

// Predict, then step: a scenario's script may ask a question before a step (engine.Question).
// space stops there and shows it with its answers on the answer keys; the answer runs the step,
// and the status line says right or wrong, and why. e, the free run and leaselab run pass
// questions by.

// askState is the question on screen, and the score so far.
type askState struct {
	open   *engine.Question // waiting for an answer; nil when none
	asked  int              // questions answered on this session
	right  int              // of them, answered right
	picked int              // the answer being run
	long   bool             // the status holds a question or its answer: it may take more lines
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

// answerNote says whether answer i was right, and why.
func answerNote(q *engine.Question, i int) string {
	text := fmt.Sprintf("✓ right: %s", q.Answers[q.Right])
	if i != q.Right {
		text = fmt.Sprintf("✗ not quite: you said %s; it is %s", q.Answers[i], q.Answers[q.Right])
	}
	if q.Because != "" {
		text += " — " + q.Because
	}
	return text
}

// askResult takes what the history part of a command said about questions.
func (m Model) askResult(hx histResult) Model {
	m.ask.long = hx.ask != nil || hx.asked
	switch {
	case hx.ask != nil:
		m.ask.open = hx.ask
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
		m.ask.asked++
		if hx.right {
			m.ask.right++
		}
	}
	m.keys.Answer.SetEnabled(m.ask.open != nil)
	return m
}

// answer takes the press of an answer key: it runs the step the question is about.
func (m Model) answer(k tea.KeyMsg) (Model, tea.Cmd) {
	q := m.ask.open
	if q == nil {
		m.status = status{text: fmt.Sprintf("no question is open: %s steps", keyName(m.keys.Step)), level: levelWarn}
		return m, nil
	}
	i := -1
	for j, name := range answerKeys(m.keys) {
		if k.String() == name {
			i = j
		}
	}
	if i < 0 || i >= len(q.Answers) {
		m.status = status{text: fmt.Sprintf("this question has %d answers: %s", len(q.Answers),
			strings.Join(answerKeys(m.keys)[:len(q.Answers)], " ")), level: levelWarn}
		return m, nil
	}
	m.ask.open, m.ask.picked = nil, i
	m.keys.Answer.SetEnabled(false)
	return m.enqueue(op{kind: opNext, answered: true, answer: i})
}

// score is the questions answered so far: "questions 2/3 right"; "" before the first.
func (a askState) score() string {
	if a.asked == 0 {
		return ""
	}
	return fmt.Sprintf("questions %d/%d right", a.right, a.asked)
}
