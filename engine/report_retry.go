package engine

import "fmt"

// summarizeRetries adds a run's failures to its summary (issue 20): nothing for a run without
// any, whose summary is as before.
func (s *Session) summarizeRetries(sum *Summary) {
	r := s.env.retry
	rc := r.counts()
	sum.ProviderFailures, sum.Retries, sum.RejectedFails = rc.ProviderFailures, rc.Retries, rc.RejectedFails
	if r.plan.active() {
		sum.ProviderCalls = r.chart.buckets()
	}
	if st := s.InitialSettings(); s.usesToggle(Toggle{Where: InRetries}, st) { // the group is used whole or not at all
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

// RetryCounts are what the run's failed attempts did, counted as they happened.
func (s *Session) RetryCounts() RetryCounts { return s.env.retry.counts() }

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
	sum.WatchdogEnded = true
	sum.Expectations, sum.ExpectationsMet = s.expectations(sum)
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
