package engine

import (
	"strings"
	"unicode/utf8"
)

// Bounds of a question, so that it fits the lab's status lines and its keys.
const (
	maxAnswers     = 4
	maxAskText     = 200
	maxAnswerText  = 40
	maxBecauseText = 300
)

// Question is a prediction the lab asks before a script step: "what happens next?". The lab
// stops at the step, shows the question with its answers on keys, runs the step once it is
// answered, and says whether the answer was right and why. leaselab run ignores questions.
type Question struct {
	Line    int
	Text    string
	Answers []string // 2 to 4, in the order of their keys
	Right   int      // index of the right answer
	Because string   // one sentence of why; may be empty
}

// Questions counts the script's questions.
func (sc *Scenario) Questions() int {
	n := 0
	for _, st := range sc.Steps {
		if st.Ask != nil {
			n++
		}
	}
	return n
}

// stepAsk marks the placeholder step an "ask:" line leaves for the step after it.
const stepAsk StepKind = -1

// askLine parses a step line that starts with "ask:" or "because:":
//
//	ask: Who owns PAY-001 after this step? | Worker-A | Worker-B | nobody = Worker-B
//	because: Worker-A's lease ran out at 09:00:00.500Z, so Worker-B's claim took it over.
//
// The question belongs to the next step; "because:" (optional) follows its "ask:".
func (p *parser) askLine(n int, verb, rest string) error {
	steps := p.sc.Steps
	var last *Step
	if len(steps) > 0 && steps[len(steps)-1].Kind == stepAsk {
		last = &p.sc.Steps[len(steps)-1]
	}
	if verb == "because:" {
		switch {
		case last == nil:
			return p.errf(n, "because: comes right after an \"ask:\" line, before the step it asks about")
		case last.Ask.Because != "":
			return p.errf(n, "because: the question of line %d already has one", last.Ask.Line)
		case rest == "":
			return p.errf(n, "because: needs a sentence of why")
		case utf8.RuneCountInString(rest) > maxBecauseText:
			return p.errf(n, "because: too long (%d characters, at most %d)", utf8.RuneCountInString(rest), maxBecauseText)
		}
		last.Ask.Because = rest
		return nil
	}
	if last != nil {
		return p.errf(n, "ask: the question of line %d has no step yet: one question per step, and the step comes next", last.Ask.Line)
	}
	q, err := p.question(n, rest)
	if err != nil {
		return err
	}
	p.sc.Steps = append(p.sc.Steps, Step{Line: n, Kind: stepAsk, Ask: q})
	return nil
}

const askForm = "want \"ask: QUESTION | ANSWER | ANSWER … = RIGHT ANSWER\" (2 to 4 answers)"

// question parses "QUESTION | ANSWER | ANSWER … = RIGHT".
func (p *parser) question(n int, rest string) (*Question, error) {
	parts := strings.Split(rest, "|")
	text := strings.TrimSpace(parts[0])
	switch {
	case text == "":
		return nil, p.errf(n, "ask: no question: %s", askForm)
	case utf8.RuneCountInString(text) > maxAskText:
		return nil, p.errf(n, "ask: question too long (%d characters, at most %d)", utf8.RuneCountInString(text), maxAskText)
	case len(parts) < 3:
		return nil, p.errf(n, "ask: %d answer(s): %s", len(parts)-1, askForm)
	case len(parts)-1 > maxAnswers:
		return nil, p.errf(n, "ask: %d answers, at most %d (they go on the keys A to D)", len(parts)-1, maxAnswers)
	}
	lastPart := parts[len(parts)-1]
	// The right answer follows the first " = " of the last answer: answers may hold an '='
	// ("LockedBy=Worker-A"), the last one not with spaces around it.
	i := strings.Index(lastPart, " = ")
	if i < 0 {
		i = strings.Index(lastPart, "=")
	}
	if i < 0 {
		return nil, p.errf(n, "ask: which answer is right? End the line with \"= ANSWER\": %s", askForm)
	}
	parts[len(parts)-1] = lastPart[:i]
	// The line reaches here whole: a " #" in the question or an answer is text, one after the
	// right answer starts a comment.
	right := stripComment(strings.TrimPrefix(strings.TrimSpace(lastPart[i:]), "="))
	q := &Question{Line: n, Text: text, Right: -1}
	for _, a := range parts[1:] {
		a = strings.TrimSpace(a)
		switch {
		case a == "":
			return nil, p.errf(n, "ask: an empty answer: %s", askForm)
		case utf8.RuneCountInString(a) > maxAnswerText:
			return nil, p.errf(n, "ask: answer %q too long (at most %d characters)", a, maxAnswerText)
		}
		for _, b := range q.Answers {
			if strings.EqualFold(a, b) {
				return nil, p.errf(n, "ask: answer %q given twice", a)
			}
		}
		if a == right {
			q.Right = len(q.Answers)
		}
		q.Answers = append(q.Answers, a)
	}
	if q.Right < 0 {
		return nil, p.errf(n, "ask: the right answer %q is not one of the answers (%s)", right, strings.Join(q.Answers, ", "))
	}
	return q, nil
}

// askStep gives step st the question a placeholder before it holds, and takes the placeholder
// out. It is called for every step the parser appends.
func (p *parser) askStep(st *Step) {
	if k := len(p.sc.Steps); k > 0 && p.sc.Steps[k-1].Kind == stepAsk {
		st.Ask = p.sc.Steps[k-1].Ask
		p.sc.Steps = p.sc.Steps[:k-1]
	}
}

// askDone fails when the last question has no step after it.
func (p *parser) askDone() error {
	if k := len(p.sc.Steps); k > 0 && p.sc.Steps[k-1].Kind == stepAsk {
		return p.errf(p.sc.Steps[k-1].Ask.Line, "ask: no step follows this question (a question comes before the step it asks about)")
	}
	return nil
}
