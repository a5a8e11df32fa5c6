package engine

import (
	"strings"
)

// Question is a prediction the lab asks before a script step: "what happens next?". The lab
// stops at the step, shows the question with its answers on keys, runs the step once it is
// answered, and says whether the answer was right and why. leaselab run ignores questions.
type Question struct {
	Line    int
	Text    string
	Answers []string // 2 to 4, in the order of their keys
	Right   int      // index of the right answer under the script's settings
	Because string   // one sentence of why; may be empty
	// Rules are the reasons not to ask it under some settings ("when …: skip:"), and, in a
	// question with no Observe, its answers under other settings (first match wins).
	Rules []AnswerRule
	// Observe is what the question asks about, read from the run: its Ifs say which answer
	// each value makes right (observe.go). nil in a file written before questions could name
	// one: it is graded by its rules over the settings its step started under.
	Observe *Observation
}

// AnswerRule is a question's right answer, or a reason to skip it, under some settings:
//
//	when ownership-check=off: = 1
//	because: Without the check the UPDATE matches the row by its key alone, and overwrites Worker-B's result.
//	when leasing=off: skip: with leasing off nothing is claimed, so there is no lease to end
//
// A rule holds when every toggle it names has that value now; with "throughout", also when
// the first worker acted (a toggle flipped in mid-lesson changed what came before).
type AnswerRule struct {
	Line       int
	When       map[string]bool
	Throughout bool
	Right      int    // the right answer's index; -1 for a skip
	Skip       string // why the question does not apply under these settings
	Because    string // why, under these settings; "" keeps the question's own
}

// Answer is what a question expects under given settings.
type Answer struct {
	Right   int    // the index of the right answer; -1 when the question is skipped
	Because string // why it is right
	Skip    string // why the question does not apply now; "" when it does
	When    string // the settings of the rule that decided, "" for the script's own answer
}

// For is the question's answer under the settings in force now, and those the run started
// with (InitialSettings): the first rule that holds, else the script's own answer.
func (q *Question) For(now, initial Settings) Answer {
	for _, r := range q.Rules {
		holds := true
		for name, want := range r.When {
			v, err := now.Get(name)
			w, err2 := initial.Get(name)
			holds = holds && err == nil && err2 == nil && v == want && (!r.Throughout || w == want)
		}
		if !holds {
			continue
		}
		when := whenString(r.When)
		if r.Throughout {
			when += " throughout"
		}
		if r.Skip != "" {
			return Answer{Right: -1, Skip: r.Skip, When: when}
		}
		because := r.Because
		if because == "" {
			because = q.Because
		}
		return Answer{Right: r.Right, Because: because, When: when}
	}
	return Answer{Right: q.Right, Because: q.Because}
}

// whenString renders conditions in the order of the toggles: "leasing=off fencing=on".
func whenString(when map[string]bool) string {
	var parts []string
	// The lab's toggles in their old order, then the other groups' in the registry's.
	names := append(AllToggleNames(), ToggleNamesIn(InRetries)...)
	for _, t := range append(names, ToggleNamesIn(InRescue)...) {
		if v, ok := when[t]; ok {
			parts = append(parts, t+"="+OnOff(v))
		}
	}
	return strings.Join(parts, " ")
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
