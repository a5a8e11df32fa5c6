// Package checks is the safety checks pane: each check of the run, held, failed, open or set
// aside from the verdict, beside the ledgers under the workers.
package checks

import (
	"slices"

	"leaselab/engine"
	"leaselab/ui/common"
)

// State is how the checks pane shows one safety check.
type State int

// Check states, in the order the pane lists them.
const (
	Fails State = iota // a check of the verdict that fails
	Holds              // a check of the verdict that holds
	Open               // fails only because the run is not finished yet
	Aside              // not in this lesson's verdict (verdict-checks): shown dimmed
)

// Shown is a check with the state the pane gives it.
type Shown struct {
	engine.Check
	State State
}

// Classify gives each check of the frame its state. A check the scenario leaves out of its
// verdict is set aside, whatever its outcome, so that it never reads as a plain FAIL beside a
// passing verdict. While the run goes on, a check that fails only because work is left (not
// every message processed yet, a crashed owner's lease not reclaimed yet) is open, not failed.
func Classify(f *common.Frame) []Shown {
	if f == nil || f.Summary == nil {
		return nil
	}
	sum := f.Summary
	out := make([]Shown, 0, len(sum.Checks))
	for _, c := range sum.Checks {
		sc := Shown{Check: c, State: Holds}
		switch {
		case !c.Decides:
			sc.State = Aside
		case c.OK:
		case !f.Done && unfinished(c, sum):
			sc.State = Open
		default:
			sc.State = Fails
		}
		out = append(out, sc)
	}
	slices.SortStableFunc(out, func(a, b Shown) int { return int(a.State) - int(b.State) })
	return out
}

// unfinished reports whether failing check c can still come to hold as the run goes on.
func unfinished(c engine.Check, sum *engine.Summary) bool {
	switch c.ID {
	case engine.CheckNoneLost:
		return true
	case engine.CheckProcessedOnce:
		return sum.ProcessedMoreThanOnce == 0
	case engine.CheckRecovered:
		return true // a crashed owner's message may still be reclaimed and processed
	}
	return false
}

// Floor is the fewest lines the checks pane takes: one per check of the verdict, and one
// that sums up the others.
func Floor(f *common.Frame) int {
	if f == nil || f.Summary == nil {
		return 0
	}
	n, aside := 0, 0
	for _, c := range f.Summary.Checks {
		if c.Decides {
			n++
		} else {
			aside = 1 // one line for every check aside
		}
	}
	return n + aside
}

// Want is how many lines the checks take at width w with nothing left out.
func (m Pane) Want(w int, wide bool) int {
	if m.Frame == nil || m.Frame.Summary == nil {
		return 0
	}
	return len(m.checkBody(Classify(m.Frame), w, wide))
}

// Counts counts the checks in each state.
func Counts(cs []Shown) (fails, open, holds, aside, asideFailing int) {
	for _, c := range cs {
		switch c.State {
		case Fails:
			fails++
		case Open:
			open++
		case Holds:
			holds++
		case Aside:
			aside++
			if !c.OK {
				asideFailing++
			}
		}
	}
	return
}
