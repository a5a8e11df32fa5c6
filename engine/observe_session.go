package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// askedStep is what the session keeps of a script step that has a question, from the moment the
// step starts: where its events begin, the settings it started under, and, once known, the
// answer the run gave (observe.go).
type askedStep struct {
	q        *Question
	from     int      // the ledger's event count when the step started: its events come after
	settings Settings // the settings in force when it started (a legacy question's rules read them)
	obs      Observed
}

// stepStarts notes, before the first action of the script step at pc, where it starts, when
// the step has a question. Next and RunToEnd call it before every action of a step.
func (s *Session) stepStarts() {
	if s.ScriptDone() || s.inStep {
		return
	}
	st := &s.Scenario.Steps[s.pc]
	if st.Ask == nil {
		return
	}
	if s.asked == nil {
		s.asked = map[int]*askedStep{}
	}
	if _, ok := s.asked[s.pc]; ok {
		return
	}
	s.asked[s.pc] = &askedStep{q: st.Ask, from: s.ledger.EventCount(), settings: s.Settings(),
		obs: Observed{Step: s.pc, Line: st.Ask.Line, Right: -1, Waiting: waitingFor(st.Ask)}}
}

// waitingFor says when q's answer will be known.
func waitingFor(q *Question) string {
	if q.Observe != nil && q.Observe.AtEnd {
		return "at the end of the run"
	}
	return "once the step is over"
}

// stepEnded reads the answers that are known now that the script step at index pc is over:
// its own question's, unless it asks about the end, and, once the script is over, every
// question's that asks about the end. Next, RunToEnd and the watchdog's end call it.
func (s *Session) stepEnded(ctx context.Context, pc int) error {
	if a := s.asked[pc]; a != nil && !a.obs.Known && a.q == s.Scenario.Steps[pc].Ask {
		if a.q.Observe == nil || !a.q.Observe.AtEnd {
			if err := s.observe(ctx, a.q, a, nil); err != nil {
				return err
			}
		}
	}
	if !s.ScriptDone() {
		return nil
	}
	return s.observeAtEnd(ctx, nil)
}

// observeAtEnd reads the answers of the questions about the end whose steps have started, now
// that the run is over; sum is its summary, or nil to make it when one is needed.
func (s *Session) observeAtEnd(ctx context.Context, sum *Summary) error {
	for _, i := range slices.Sorted(maps.Keys(s.asked)) {
		a := s.asked[i]
		if a.obs.Known {
			continue
		}
		if sum == nil {
			var err error
			if sum, err = s.Summarize(ctx); err != nil {
				return err
			}
		}
		if err := s.observe(ctx, a.q, a, sum); err != nil {
			return err
		}
	}
	return nil
}

// observe reads q's answer from the run into a.
func (s *Session) observe(ctx context.Context, q *Question, a *askedStep, sum *Summary) error {
	o := &a.obs
	o.Known, o.Waiting = true, ""
	if q.Observe == nil {
		ans := q.For(a.settings, s.InitialSettings())
		o.Legacy, o.Right, o.Because, o.When = true, ans.Right, ans.Because, ans.When
		if ans.Skip != "" {
			o.Right, o.Because = -1, ans.Skip
		}
		if o.Right >= 0 {
			o.Value = q.Answers[o.Right]
		}
		o.Words = "graded by the settings the step started under (the question names no observation)"
		return nil
	}
	var rows []Row
	if q.Observe.needsRows() {
		var err error
		if rows, err = s.db.Snapshot(ctx); err != nil {
			return fmt.Errorf("observe %q: %w", q.Observe.Text, err)
		}
	}
	v, ok := q.Observe.read(s.ledger.EventsSince(a.from), rows, sum)
	if !ok {
		o.Value, o.Words = "", fmt.Sprintf("%s: did not happen", q.Observe.Text)
		return nil
	}
	o.Value, o.Words = v, fmt.Sprintf("%s: %s", q.Observe.Text, v)
	o.Right, o.Because = q.Observe.answer(v)
	if o.Because == "" && o.Right >= 0 {
		o.Because = q.Because
	}
	return nil
}

// Observed is the answer the run gave to the question before script step pc: Known once its
// step is over (or, for one about the end, once the run is); ok is false when that step has
// not started. The lab grades an answer with it; a test of every path checks the grade.
func (s *Session) Observed(pc int) (Observed, bool) {
	a := s.asked[pc]
	if a == nil {
		return Observed{}, false
	}
	return a.obs, true
}

// observations are the answers of every question whose step has started, in script order.
func (s *Session) observations() []Observed {
	var out []Observed
	for _, i := range slices.Sorted(maps.Keys(s.asked)) {
		out = append(out, s.asked[i].obs)
	}
	return out
}
