package engine

import (
	"fmt"
	"time"
)

// summarizeRetries adds a run's failures to its summary (issue 20): nothing for a run without
// any, whose summary is as before.
func (v *runView) summarizeRetries(sum *Summary) {
	r := v.env.retry
	rc := r.counts()
	sum.ProviderFailures, sum.Retries, sum.RejectedFails = rc.ProviderFailures, rc.Retries, rc.RejectedFails
	sum.OutageCalls = rc.OutageCalls
	if r.plan.active() {
		sum.ProviderCalls = r.chart.buckets()
	}
	if st := v.initial; v.usesToggle(Toggle{Where: InRetries}, st) { // the group is used whole or not at all
		for _, k := range ToggleNamesIn(InRetries) {
			v, _ := st.Get(k)
			sum.Settings[k] = OnOff(v)
		}
		if st.Backoff {
			sum.Settings["backoff-policy"] = st.BackoffPolicy
			sum.Settings["backoff-base"] = st.BackoffBase.String()
			sum.Settings["backoff-cap"] = st.BackoffCap.String()
		}
		if st.DeadLetter {
			sum.Settings["max-attempts"] = fmt.Sprint(st.MaxAttempts)
		}
	}
}

// noneLost is the none-lost check: every message finished, processed or (apart) dead-lettered.
// A dead letter is parked on purpose, with its error: it is not lost, and its payment stays
// Pending.
func noneLost(c Counts) Check {
	detail := fmt.Sprintf("outbox Processed/Pending/Processing %d/%d/%d", c.OutboxProcessed, c.OutboxPending, c.OutboxProcessing)
	if c.OutboxDeadLettered > 0 {
		detail += fmt.Sprintf(", %d dead-lettered (parked, not lost)", c.OutboxDeadLettered)
	}
	return Check{ID: CheckNoneLost, Name: "every message finalized, none lost",
		OK:     c.OutboxProcessed+c.OutboxDeadLettered == c.Messages && c.PaymentsPending == c.OutboxDeadLettered,
		Detail: detail}
}

// SetWatchdogEnded records that the watchdog ended the run (ErrNoProgress), for the report and
// the watchdog_ended metric, and evaluates the expectations again.
func (s *Session) SetWatchdogEnded(sum *Summary) {
	v := s.view()
	sum.WatchdogEnded = true
	sum.Expectations, sum.ExpectationsMet = v.expectations(sum)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WatchdogExpected says whether the watchdog ended the run and the scenario expected it to (an
// expectation watchdog_ended = 1 that holds): a poison message retried for ever, bounded.
func (sum *Summary) WatchdogExpected() bool {
	if !sum.WatchdogEnded {
		return false
	}
	for _, e := range sum.Expectations {
		if e.Expect == "watchdog_ended = 1" && e.OK {
			return true
		}
	}
	return false
}

// outageCheck is, for a run with a provider outage, whether the workers waited it out or
// hammered the down provider: the provider calls made during the outage, against the most
// the workers could have made (one each per provider latency, a failed call taking its time
// too). More than three quarters of that is hammering: the workers spent nearly all of the
// outage calling a provider that could not answer (retried at once: 100%; with backoff's
// exponential waits retry-backoff makes 62%). ok is false when the run has no outage.
func (v *runView) outageCheck(sum *Summary) (Check, bool) {
	var down time.Duration
	for _, o := range v.sc.Outages {
		down += o.For
	}
	latency := v.initial.ProviderLatency
	if down <= 0 || latency <= 0 {
		return Check{}, false
	}
	most := len(v.workers) * int((down+latency-1)/latency)
	c := Check{ID: CheckOutage, Name: "the outage was waited out, not hammered", Short: "outage waited out",
		OK: 4*sum.OutageCalls <= 3*most}
	how := "waited out"
	if !c.OK {
		how = "the provider was hammered"
	}
	c.Detail = fmt.Sprintf("%d provider %s during the %s outage, %d%% of the %d the %d workers could make (one each per %s): %s",
		sum.OutageCalls, plural(sum.OutageCalls, "call"), down, 100*sum.OutageCalls/max(most, 1), most, len(v.workers), latency, how)
	return c, true
}
