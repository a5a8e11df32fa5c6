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

// observer grades the script's questions by what the run shows: it notes where a step with a
// question starts, and reads the answer from the events since then (and the rows, or the
// summary at the end of the run) once the step, or the run, is over.
type observer struct {
	ledger    *Ledger
	db        DB
	settings  *liveSettings
	summarize func(ctx context.Context) (*Summary, error) // the run's summary, for questions about its end
	// asked are the script steps with a question that have started, by index: where their
	// events begin and, once known, the answer the run gave.
	asked map[int]*askedStep
}

// starts notes that script step pc (st) starts, when it has a question and had not started.
func (o *observer) starts(pc int, st *Step) {
	if st.Ask == nil {
		return
	}
	if o.asked == nil {
		o.asked = map[int]*askedStep{}
	}
	if _, ok := o.asked[pc]; ok {
		return
	}
	o.asked[pc] = &askedStep{q: st.Ask, from: o.ledger.EventCount(), settings: o.settings.get(),
		obs: Observed{Step: pc, Line: st.Ask.Line, Right: -1, Waiting: waitingFor(st.Ask)}}
}

// waitingFor says when q's answer will be known.
func waitingFor(q *Question) string {
	if q.Observe != nil && q.Observe.AtEnd {
		return "at the end of the run"
	}
	return "once the step is over"
}

// ended reads the answer that is known now that the script step at index pc (whose question
// is ask) is over: its own question's, unless it asks about the end (Script.ended then calls
// atEnd once the script is over).
func (o *observer) ended(ctx context.Context, pc int, ask *Question) error {
	if a := o.asked[pc]; a != nil && !a.obs.Known && a.q == ask {
		if a.q.Observe == nil || !a.q.Observe.AtEnd {
			if err := o.observe(ctx, a.q, a, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// atEnd reads the answers of the questions about the end whose steps have started, now
// that the run is over; sum is its summary, or nil to make it when one is needed.
func (o *observer) atEnd(ctx context.Context, sum *Summary) error {
	for _, i := range slices.Sorted(maps.Keys(o.asked)) {
		a := o.asked[i]
		if a.obs.Known {
			continue
		}
		if sum == nil {
			var err error
			if sum, err = o.summarize(ctx); err != nil {
				return err
			}
		}
		if err := o.observe(ctx, a.q, a, sum); err != nil {
			return err
		}
	}
	return nil
}

// observe reads q's answer from the run into a.
func (ob *observer) observe(ctx context.Context, q *Question, a *askedStep, sum *Summary) error {
	o := &a.obs
	o.Known, o.Waiting = true, ""
	if q.Observe == nil {
		_, initial := ob.settings.both()
		ans := q.For(a.settings, initial)
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
		if rows, err = ob.db.Snapshot(ctx); err != nil {
			return fmt.Errorf("observe %q: %w", q.Observe.Text, err)
		}
	}
	v, ok := q.Observe.read(ob.ledger.EventsSince(a.from), rows, sum)
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
func (o *observer) get(pc int) (Observed, bool) {
	a := o.asked[pc]
	if a == nil {
		return Observed{}, false
	}
	return a.obs, true
}

// observations are the answers of every question whose step has started, in script order.
func (o *observer) list() []Observed {
	var out []Observed
	for _, i := range slices.Sorted(maps.Keys(o.asked)) {
		out = append(out, o.asked[i].obs)
	}
	return out
}
