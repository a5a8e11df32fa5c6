package plain

import (
	"fmt"
	"slices"
	"strings"

	"leaselab/engine"
	"leaselab/ui/checks"
	"leaselab/ui/common"
)

// withWhen names the settings the expectations are for: " with leasing=off", or "".
func withWhen(rs []engine.ExpectResult) string {
	var whens []string
	for _, r := range rs {
		if r.When != "" && !slices.Contains(whens, r.When) {
			whens = append(whens, r.When)
		}
	}
	if len(whens) == 0 {
		return ""
	}
	return " with " + strings.Join(whens, ", ")
}

// verdict says the end of the run: the ledgers' main counts, each safety check as the lab's
// checks pane classes it, the verdict, and the expectations.
func verdict(p *printer, f *common.Frame) {
	sum := f.Summary
	if sum == nil {
		return
	}
	p.line("The scenario is done.")
	p.line("Ledgers: %d processing %s for %d unique %s; %d processed more than once; %d status %s with the provider; %d ownership %s; %d rejected %s; %d %s.",
		sum.ProcessingAttempts, common.Plural(sum.ProcessingAttempts, "attempt"),
		sum.UniqueProcessed, common.Plural(sum.UniqueProcessed, "message"),
		sum.ProcessedMoreThanOnce,
		sum.StatusChecks, common.Plural(sum.StatusChecks, "check"),
		sum.OwnershipViolations, common.Plural(sum.OwnershipViolations, "violation"),
		sum.RejectedFinalizes, common.Plural(sum.RejectedFinalizes, "finalize"),
		sum.Reclaims, common.Plural(sum.Reclaims, "reclaim"))
	for _, c := range checks.Classify(f) {
		word := map[checks.State]string{
			checks.Holds: "Check holds",
			checks.Fails: "Check FAILS",
			checks.Open:  "Check open (waits for work still to do)",
			checks.Aside: "Check not in this lesson's verdict",
		}[c.State]
		if c.State == checks.Aside {
			word += map[bool]string{true: ", holds", false: ", fails"}[c.OK]
		}
		p.line("%s: %s: %s.", word, c.Name, strings.TrimSuffix(c.Detail, "."))
	}
	banner := "VERDICT: FAIL"
	if sum.Passed {
		banner = "VERDICT: PASS"
	}
	p.line("%s. %s", banner, sum.Verdict)
	rs := sum.Expectations
	met := 0
	var missed []string
	for _, r := range rs {
		if r.OK {
			met++
		} else {
			missed = append(missed, fmt.Sprintf("%s, got %s", r.Expect, r.Actual))
		}
	}
	switch {
	case sum.ExpectationsNotJudged != "":
		p.line("Expectations not judged: %s.", strings.TrimSuffix(sum.ExpectationsNotJudged, "."))
	case !sum.ExpectationsMet:
		p.line("Not as expected%s: %d of %d met; expected %s.", withWhen(rs), met, len(rs), strings.Join(missed, "; "))
	case !sum.Passed:
		p.line("As expected%s: %d of %d met. The failure is the lesson.", withWhen(rs), met, len(rs))
	default:
		p.line("As expected%s: %d of %d met.", withWhen(rs), met, len(rs))
	}
	if sum.WatchdogEnded {
		p.line("Did not finish: %s.", strings.TrimSuffix(sum.DidNotFinish, "."))
	}
}
