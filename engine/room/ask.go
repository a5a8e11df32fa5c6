package room

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"leaselab/engine"
	"leaselab/engine/words"
)

// The teacher asks the room a question — one of the scenario's, or one typed on the spot — and
// every attendee answers with a key; the answers arrive on the teacher's screen as a histogram.
// Each attendee has one answer, the last they gave. A typed question's words are the teacher's,
// still escaped and bounded as every text a screen shows.

// Bounds of a question.
const (
	MaxQuestionRunes = 200
	MaxAnswerRunes   = 60
	MinAnswers       = 2
	MaxAnswers       = 6
)

// Question is a question for the room.
type Question struct {
	Text    string
	Answers []string
	// From says where it comes from: the scenario's line ("after.scenario:12"), or "typed".
	From string
	// Source is the scenario's question, whose right answer depends on the settings; nil for a
	// typed one.
	Source *engine.Question
}

// QuestionsOf lists the questions of sc's script, in order.
func QuestionsOf(sc *engine.Scenario) []Question {
	var qs []Question
	for _, st := range sc.Steps {
		if q := st.Ask; q != nil {
			qs = append(qs, Question{Text: q.Text, Answers: q.Answers, From: fmt.Sprintf("%s:%d", sc.Source, q.Line), Source: q})
		}
	}
	return qs
}

// ParseQuestion reads a question the teacher typed: "text | answer | answer …", 2 to 6 answers;
// a text alone gets "yes | no | not sure".
func ParseQuestion(typed string) (Question, error) {
	parts := strings.Split(typed, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	q := Question{Text: parts[0], Answers: parts[1:], From: "typed"}
	if len(q.Answers) == 0 {
		q.Answers = []string{"yes", "no", "not sure"}
	}
	return q, q.check()
}

// check bounds the question and escapes its words.
func (q *Question) check() error {
	q.Text = words.Escape(q.Text)
	switch {
	case q.Text == "":
		return fmt.Errorf("a question needs words: type it, then | and its answers")
	case utf8.RuneCountInString(q.Text) > MaxQuestionRunes:
		return fmt.Errorf("a question of %d characters: at most %d", utf8.RuneCountInString(q.Text), MaxQuestionRunes)
	case len(q.Answers) < MinAnswers || len(q.Answers) > MaxAnswers:
		return fmt.Errorf("%d answers: want %d to %d, separated by |", len(q.Answers), MinAnswers, MaxAnswers)
	}
	answers := make([]string, len(q.Answers))
	for i, a := range q.Answers {
		answers[i] = words.Escape(a)
		switch {
		case answers[i] == "":
			return fmt.Errorf("answer %d is empty", i+1)
		case utf8.RuneCountInString(answers[i]) > MaxAnswerRunes:
			return fmt.Errorf("answer %d has %d characters: at most %d", i+1, utf8.RuneCountInString(answers[i]), MaxAnswerRunes)
		}
	}
	q.Answers = answers
	return nil
}

// asking is the question open now and its answers, by attendee.
type asking struct {
	q       *Question // the question asked last (nil: none yet)
	open    bool      // it takes answers
	answers map[string]int
	n       int // questions asked so far: an answer names the question it was for
}

// Ask opens q for every attendee; the answers to the question before are dropped.
func (r *Room) Ask(q Question) error {
	if err := q.check(); err != nil {
		return err
	}
	r.lmu.Lock()
	r.ask = asking{q: &q, open: true, answers: map[string]int{}, n: r.ask.n + 1}
	r.lmu.Unlock()
	r.changed()
	return nil
}

// CloseQuestion closes the question: its histogram stays on screen, and no answer is taken.
func (r *Room) CloseQuestion() {
	r.lmu.Lock()
	r.ask.open = false
	r.lmu.Unlock()
	r.changed()
}

// Questions are the scenario's questions the teacher may ask.
func (r *Room) Questions() []Question { return r.cfg.Questions }

// Answer records the attendee's answer i (0-based) to question n (QuestionView.N), replacing
// one they gave before. An answer to a question that is closed or no longer open is refused.
func (s *Seat) Answer(n, i int) error {
	r := s.r
	r.lmu.Lock()
	defer r.lmu.Unlock()
	switch {
	case !r.ask.open || r.ask.n != n:
		return fmt.Errorf("that question is closed: %w", engine.ErrNotNow)
	case i < 0 || i >= len(r.ask.q.Answers):
		return fmt.Errorf("answer %d: the question has %d: %w", i+1, len(r.ask.q.Answers), engine.ErrNotNow)
	}
	r.ask.answers[s.name] = i
	r.changed()
	return nil
}

// QuestionView is the question as the screens show it: the histogram of its answers so far.
type QuestionView struct {
	N       int // which question of the room this is (1, 2, …)
	Text    string
	Answers []string
	From    string
	Open    bool
	Counts  []int          // answers given, per answer
	Given   int            // attendees who answered
	Mine    map[string]int // each attendee's answer, by name
	// Right is the scenario's answer under the room's settings now (-1: none, or a typed
	// question), and Because why; Skip says when the scenario would not ask it now.
	Right         int
	Because, Skip string
}

// view copies the question asked last, nil when none was; r.lmu must be held. A closed one
// keeps its answers.
func (a *asking) view(now, initial engine.Settings) *QuestionView {
	if a.q == nil {
		return nil
	}
	v := &QuestionView{N: a.n, Text: a.q.Text, Answers: a.q.Answers, From: a.q.From, Open: a.open,
		Counts: make([]int, len(a.q.Answers)), Mine: map[string]int{}, Right: -1}
	for name, i := range a.answers {
		v.Counts[i]++
		v.Given++
		v.Mine[name] = i
	}
	if a.q.Source != nil {
		ans := a.q.Source.For(now, initial)
		v.Right, v.Because, v.Skip = ans.Right, words.Escape(ans.Because), words.Escape(ans.Skip)
	}
	return v
}
