package scenario

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"leaselab/engine"
)

// Bounds of a question, so that it fits the lab's status lines and its keys.
const (
	maxAnswers     = 4
	maxAskText     = 200
	maxAnswerText  = 40
	maxBecauseText = 300
)

// stepAsk marks the placeholder step an "ask:" line leaves for the step after it.
const stepAsk engine.StepKind = -1

// askLine parses a step line that starts with "ask:", "observe:", "if", "because:" or "when":
//
//	ask: Who owns PAY-001 after this step? | Worker-A | Worker-B | nobody = Worker-B
//	observe: row PAY-001
//	if Processing by Worker-B: Worker-B
//	because: Worker-A's lease ran out at 09:00:00.500Z, so Worker-B's claim took it over.
//	if Processing by Worker-A: Worker-A
//	because: Worker-B's claim did not take the row: it is still Worker-A's.
//	when leasing=off: skip: with leasing off there is no lease: nobody owns a row
//
// The question belongs to the next step. "observe:" names what the engine reads from the run to
// grade it, and each "if VALUE: ANSWER" the answer that value makes right, with a "because:" of
// its own; "= RIGHT" on the ask line is the answer the lesson expects as written. A "because:"
// right after the ask line is the question's own.
func (p *parser) askLine(n int, verb, rest string) error {
	steps := p.sc.Steps
	var last *engine.Step
	if len(steps) > 0 && steps[len(steps)-1].Kind == stepAsk {
		last = &p.sc.Steps[len(steps)-1]
	}
	lastIf := p.lastIf
	p.lastIf = nil
	switch verb {
	case "observe:", "if":
		if last == nil {
			return p.errf(n, "%s comes after an \"ask:\" line, before the step it asks about", verb)
		}
		return p.observeLine(n, verb, rest, last.Ask)
	case "because:":
		if lastIf != nil {
			return p.becauseOf(n, &lastIf.Because, fmt.Sprintf("the if line %d", lastIf.Line), rest)
		}
		if last != nil && last.Ask.Observe != nil && len(last.Ask.Observe.Ifs) > 0 && len(last.Ask.Rules) == 0 {
			return p.errf(n, "because: belongs right after an if line (one each), or right after the ask line")
		}
	}
	if verb == "when" {
		if last == nil {
			return p.errf(n, "when: a question's answer under other settings comes right after its \"ask:\" line")
		}
		r, err := p.answerRule(n, last.Ask, rest)
		if err != nil {
			return err
		}
		last.Ask.Rules = append(last.Ask.Rules, r)
		return nil
	}
	if verb == "because:" && last != nil && len(last.Ask.Rules) > 0 {
		r := &last.Ask.Rules[len(last.Ask.Rules)-1]
		switch {
		case r.Skip != "":
			return p.errf(n, "because: the when line %d skips the question: its reason is its why", r.Line)
		case r.Because != "":
			return p.errf(n, "because: the when line %d already has one", r.Line)
		case rest == "":
			return p.errf(n, "because: needs a sentence of why")
		case utf8.RuneCountInString(rest) > maxBecauseText:
			return p.errf(n, "because: too long (%d characters, at most %d)", utf8.RuneCountInString(rest), maxBecauseText)
		}
		r.Because = rest
		return nil
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
	p.sc.Steps = append(p.sc.Steps, engine.Step{Line: n, Kind: stepAsk, Ask: q})
	return nil
}

const askForm = "want \"ask: QUESTION | ANSWER | ANSWER … = RIGHT ANSWER\" (2 to 4 answers)"

// question parses "QUESTION | ANSWER | ANSWER … = RIGHT".
func (p *parser) question(n int, rest string) (*engine.Question, error) {
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
	q := &engine.Question{Line: n, Text: text, Right: -1}
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

const ruleForm = "want \"when TOGGLE=on|off …[ throughout]: = ANSWER\" or \"when TOGGLE=on|off …: skip: REASON\""

// answerRule parses "TOGGLE=on|off … [throughout]: = ANSWER" or "…: skip: REASON".
func (p *parser) answerRule(n int, q *engine.Question, rest string) (engine.AnswerRule, error) {
	r := engine.AnswerRule{Line: n, When: map[string]bool{}, Right: -1}
	conds, what, ok := strings.Cut(rest, ":")
	if !ok {
		return r, p.errf(n, "when: %s", ruleForm)
	}
	for _, c := range strings.Fields(conds) {
		if c == "throughout" {
			r.Throughout = true
			continue
		}
		if err := p.condition(n, "when", c, ruleForm, r.When); err != nil {
			return r, err
		}
	}
	if len(r.When) == 0 {
		return r, p.errf(n, "when: name at least one toggle: %s", ruleForm)
	}
	what = strings.TrimSpace(what)
	if reason, ok := strings.CutPrefix(what, "skip:"); ok {
		r.Skip = strings.TrimSpace(reason)
		switch {
		case r.Skip == "":
			return r, p.errf(n, "when … skip: say why the question does not apply")
		case utf8.RuneCountInString(r.Skip) > maxBecauseText:
			return r, p.errf(n, "when … skip: reason too long (%d characters, at most %d)", utf8.RuneCountInString(r.Skip), maxBecauseText)
		}
		return r, nil
	}
	right, ok := strings.CutPrefix(what, "=")
	if !ok {
		return r, p.errf(n, "when: %s", ruleForm)
	}
	if q.Observe != nil {
		return r, p.errf(n, "when …: = ANSWER: the question observes %q, so what happens decides its answer (if lines); a when line may only skip it", q.Observe.Text)
	}
	right = strings.TrimSpace(right)
	for i, a := range q.Answers {
		if a == right {
			r.Right = i
		}
	}
	if r.Right < 0 {
		return r, p.errf(n, "when: the right answer %q is not one of the answers (%s)", right, strings.Join(q.Answers, ", "))
	}
	return r, nil
}

// askStep gives step st the question a placeholder before it holds, and takes the placeholder
// out. It is called for every step the parser appends.
// A question that observes must say which value makes its expected answer right.
func (p *parser) askStep(st *engine.Step) error {
	if k := len(p.sc.Steps); k > 0 && p.sc.Steps[k-1].Kind == stepAsk {
		q := p.sc.Steps[k-1].Ask
		if o := q.Observe; o != nil && !slices.ContainsFunc(o.Ifs, func(a engine.IfAnswer) bool { return a.Answer == q.Right }) {
			return p.errf(o.Line, "observe: no \"if VALUE: %s\" line: which value of %q makes the expected answer right?", q.Answers[q.Right], o.Text)
		}
		st.Ask = q
		p.sc.Steps = p.sc.Steps[:k-1]
	}
	return nil
}

// askDone fails when the last question has no step after it.
func (p *parser) askDone() error {
	if k := len(p.sc.Steps); k > 0 && p.sc.Steps[k-1].Kind == stepAsk {
		return p.errf(p.sc.Steps[k-1].Ask.Line, "ask: no step follows this question (a question comes before the step it asks about)")
	}
	return nil
}

const ifForm = "want \"if VALUE: ANSWER\" (VALUE: what the observation reads; ANSWER: one of the question's)"

// observeLine parses "observe: OBSERVATION" and "if VALUE: ANSWER" for question q.
func (p *parser) observeLine(n int, verb, rest string, q *engine.Question) error {
	if verb == "observe:" {
		switch {
		case q.Observe != nil:
			return p.errf(n, "observe: the question of line %d already observes %q (line %d)", q.Line, q.Observe.Text, q.Observe.Line)
		case len(q.Rules) > 0:
			return p.errf(n, "observe: comes right after the ask line (and its because:), before its when lines")
		}
		o, err := engine.ParseObservation(rest)
		if err != nil {
			return p.errf(n, "%v", err)
		}
		o.Line, q.Observe = n, o
		return nil
	}
	if q.Observe == nil {
		return p.errf(n, "if: the question of line %d observes nothing yet: an \"observe:\" line comes first", q.Line)
	}
	value, answer, ok := strings.Cut(rest, ":")
	value, answer = strings.TrimSpace(value), strings.TrimSpace(answer)
	if !ok || value == "" || answer == "" {
		return p.errf(n, "if: %s", ifForm)
	}
	if err := q.Observe.CheckValue(value); err != nil {
		return p.errf(n, "if: %v", err)
	}
	a := engine.IfAnswer{Line: n, Value: value, Answer: -1}
	for i, s := range q.Answers {
		if s == answer {
			a.Answer = i
		}
	}
	if a.Answer < 0 {
		return p.errf(n, "if: %q is not one of the answers (%s)", answer, strings.Join(q.Answers, ", "))
	}
	for _, b := range q.Observe.Ifs {
		if b.Value == value {
			return p.errf(n, "if: %q already has its answer (line %d)", value, b.Line)
		}
	}
	q.Observe.Ifs = append(q.Observe.Ifs, a)
	p.lastIf = &q.Observe.Ifs[len(q.Observe.Ifs)-1]
	return nil
}

// becauseOf sets *dst, the why of what names, from a "because:" line.
func (p *parser) becauseOf(n int, dst *string, what, rest string) error {
	switch {
	case *dst != "":
		return p.errf(n, "because: %s already has one", what)
	case rest == "":
		return p.errf(n, "because: needs a sentence of why")
	case utf8.RuneCountInString(rest) > maxBecauseText:
		return p.errf(n, "because: too long (%d characters, at most %d)", utf8.RuneCountInString(rest), maxBecauseText)
	}
	*dst = rest
	return nil
}
