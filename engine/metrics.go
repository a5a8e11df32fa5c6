package engine

import (
	"fmt"
	"strings"
)

// expectations judges the scenario's expectations for the settings the run started with.
func (v *runView) expectations(sum *Summary) ([]ExpectResult, bool) {
	initial := v.initial
	var out []ExpectResult
	met := true
	any := false
	for _, b := range v.sc.Expect {
		if !b.Applies(initial) {
			continue
		}
		for _, e := range b.Items {
			any = true
			actual, ok := sum.Metric(e.Metric)
			r := ExpectResult{Expect: e.String(), When: b.WhenString(), Line: e.Line, Actual: actual}
			r.OK = ok && compare(e, actual)
			met = met && r.OK
			out = append(out, r)
		}
	}
	if !any {
		// A scenario that declares nothing expects every check to hold.
		r := ExpectResult{Expect: "verdict = pass", Actual: passFail(sum.Passed), OK: sum.Passed}
		out, met = append(out, r), sum.Passed
	}
	if sum.ExpectationsNotJudged = v.notJudged(); sum.ExpectationsNotJudged != "" {
		for i := range out {
			out[i].OK, out[i].NotJudged = false, true
		}
		met = false
	}
	return out, met
}

func passFail(b bool) string {
	if b {
		return "pass"
	}
	return "fail"
}

func compare(e Expectation, actual string) bool {
	if e.Word != "" {
		return (actual == e.Word) == (e.Op == "=")
	}
	var v int64
	if _, err := fmt.Sscan(actual, &v); err != nil {
		return false
	}
	switch e.Op {
	case "=":
		return v == e.Value
	case "!=":
		return v != e.Value
	case "<":
		return v < e.Value
	case "<=":
		return v <= e.Value
	case ">":
		return v > e.Value
	case ">=":
		return v >= e.Value
	}
	return false
}

// metricNames are the numeric summary keys an expectation may name.
var metricNames = []string{
	"processing_attempts", "unique_processed", "processed_more_than_once", "finalized_more_than_once", "status_checks",
	"reprocessed_after_lost_lease", "processed_by_two_owners", "reprocessed_by_same_worker",
	"rows_loaded", "claims_won", "claims_empty", "claims_blocked", "claims_backoff", "lock_waits", "reclaims",
	"ownership_violations", "rejected_finalizes", "duplicate_rows", "creation_calls",
	"creation_calls_in_workers", "lost", "recovered", "messages", "busy_retries",
	"payments.paid", "payments.failed", "payments.pending",
	"outbox.processed", "outbox.pending", "outbox.processing",
	"dead_lettered", "provider_failures", "outage_calls", "retries", "rejected_fails", "watchdog_ended", "verdict",
	"status_checks[KEY]", "processed_by_worker[WORKER]",
}

// MetricNames lists what an expectation may name.
func MetricNames() []string {
	return append(append([]string(nil), metricNames...), extraMetricNames...)
}

// IsMetric reports whether name is a metric an expectation may name.
func IsMetric(name string) bool {
	if base, _, ok := strings.Cut(name, "["); ok && strings.HasSuffix(name, "]") && len(name) > len(base)+2 {
		return base == "status_checks" || base == "processed_by_worker"
	}
	for _, m := range MetricNames() {
		if m == name && !strings.Contains(m, "[") {
			return true
		}
	}
	return false
}

// Metric returns the value of a named metric as text.
func (sum *Summary) Metric(name string) (string, bool) {
	if base, arg, ok := strings.Cut(strings.TrimSuffix(name, "]"), "["); ok {
		switch base {
		case "status_checks":
			return fmt.Sprint(sum.StatusChecksByKey[arg]), true
		case "processed_by_worker":
			return fmt.Sprint(sum.ProcessedByWorker[WorkerName(arg)]), true
		}
		return "", false
	}
	recovered := sum.Recovered
	values := map[string]int{
		"processing_attempts": sum.ProcessingAttempts, "unique_processed": sum.UniqueProcessed,
		"processed_more_than_once": sum.ProcessedMoreThanOnce, "status_checks": sum.StatusChecks,
		"finalized_more_than_once":     sum.FinalizedMoreThanOnce,
		"reprocessed_after_lost_lease": sum.ReprocessedAfterLostLease, "processed_by_two_owners": sum.ProcessedByTwoOwners,
		"reprocessed_by_same_worker": sum.ReprocessedBySameWorker,
		"rows_loaded":                sum.RowsLoaded, "claims_won": sum.ClaimsWon, "claims_empty": sum.ClaimsEmpty,
		"claims_blocked": sum.ClaimsBlocked, "claims_backoff": sum.ClaimsBackoff, "reclaims": sum.Reclaims, "lock_waits": sum.LockWaits,
		"ownership_violations": sum.OwnershipViolations, "rejected_finalizes": sum.RejectedFinalizes,
		"duplicate_rows": sum.DuplicateRows, "creation_calls": sum.CreationCalls,
		"creation_calls_in_workers": sum.CreationCallsInWorker, "lost": sum.Lost, "recovered": recovered,
		"messages": sum.Messages, "busy_retries": sum.BusyRetries,
		"payments.paid": sum.Payments.Paid, "payments.failed": sum.Payments.Failed, "payments.pending": sum.Payments.Pending,
		"outbox.processed": sum.Outbox.Processed, "outbox.pending": sum.Outbox.Pending, "outbox.processing": sum.Outbox.Processing,
		"dead_lettered": sum.DeadLettered, "provider_failures": sum.ProviderFailures, "outage_calls": sum.OutageCalls, "retries": sum.Retries,
		"rejected_fails": sum.RejectedFails, "watchdog_ended": boolInt(sum.WatchdogEnded),
	}
	if name == "verdict" {
		return passFail(sum.Passed), true
	}
	if v, ok := sum.extraMetric(name); ok {
		return fmt.Sprint(v), true
	}
	v, ok := values[name]
	return fmt.Sprint(v), ok
}
