package ui

import (
	"slices"

	"leaselab/engine"
	"leaselab/ui/common"
)

// checkState is how the checks pane shows one safety check.
type checkState int

// Check states, in the order the pane lists them.
const (
	checkFails checkState = iota // a check of the verdict that fails
	checkHolds                   // a check of the verdict that holds
	checkOpen                    // fails only because the run is not finished yet
	checkAside                   // not in this lesson's verdict (verdict-checks): shown dimmed
)

// shownCheck is a check with the state the pane gives it.
type shownCheck struct {
	engine.Check
	state checkState
}

// classify gives each check of the frame its state. A check the scenario leaves out of its
// verdict is set aside, whatever its outcome, so that it never reads as a plain FAIL beside a
// passing verdict. While the run goes on, a check that fails only because work is left (not
// every message processed yet, a crashed owner's lease not reclaimed yet) is open, not failed.
func classify(f *common.Frame) []shownCheck {
	if f == nil || f.Summary == nil {
		return nil
	}
	sum := f.Summary
	out := make([]shownCheck, 0, len(sum.Checks))
	for _, c := range sum.Checks {
		sc := shownCheck{Check: c, state: checkHolds}
		switch {
		case !c.Decides:
			sc.state = checkAside
		case c.OK:
		case !f.Done && unfinished(c, sum):
			sc.state = checkOpen
		default:
			sc.state = checkFails
		}
		out = append(out, sc)
	}
	slices.SortStableFunc(out, func(a, b shownCheck) int { return int(a.state) - int(b.state) })
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

// checkFloor is the fewest lines the checks pane takes: one per check of the verdict, and one
// that sums up the others.
func checkFloor(f *common.Frame) int {
	if f == nil || f.Summary == nil {
		return 0
	}
	n, aside := 0, false
	for _, c := range f.Summary.Checks {
		if c.Decides {
			n++
		} else {
			aside = true
		}
	}
	return n + b2i(aside)
}

// checkLinesWanted is how many lines the checks take at width w with nothing left out.
func (m checksPane) checkLinesWanted(w int, wide bool) int {
	if m.Frame == nil || m.Frame.Summary == nil {
		return 0
	}
	return len(m.checkBody(classify(m.Frame), w, wide))
}

// checkCounts counts the checks in each state.
func checkCounts(cs []shownCheck) (fails, open, holds, aside, asideFailing int) {
	for _, c := range cs {
		switch c.state {
		case checkFails:
			fails++
		case checkOpen:
			open++
		case checkHolds:
			holds++
		case checkAside:
			aside++
			if !c.OK {
				asideFailing++
			}
		}
	}
	return
}
