package words

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"leaselab/engine"
)

// retrySettings names a run's retry settings on the report's Settings line: only for a run with
// failures or retry toggles on (the summary has them then), so other reports are as before.
func retrySettings(m map[string]string) []string {
	var parts []string
	for _, k := range engine.ToggleNamesIn(engine.InRetries) {
		if v, ok := m[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	for _, k := range []string{"backoff-policy", "backoff-base", "backoff-cap", "max-attempts"} {
		if v, ok := m[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return parts
}

// chartWidth is the longest bar of the provider-call chart, in characters.
const chartWidth = 40

// writeRetries prints what a run's failures did: the three ends of a message (finished,
// dead-lettered, lost), the failures and retries, and the provider calls per 100 ms as a bar
// chart (#: calls answered, x: calls that failed). Nothing for a run without failures.
func writeRetries(b *strings.Builder, sum *engine.Summary) {
	if sum.ProviderCalls == nil && sum.DeadLettered == 0 {
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nFinished / dead-lettered / lost\t%d / %d / %d\n", sum.Outbox.Processed, sum.DeadLettered, sum.Lost)
	fmt.Fprintf(tw, "Provider calls that failed\t%d\n", sum.ProviderFailures)
	fmt.Fprintf(tw, "Failed attempts released for a retry\t%d\n", sum.Retries)
	if sum.RejectedFails > 0 {
		fmt.Fprintf(tw, "Failed attempts whose lease was gone (0 rows)\t%d\n", sum.RejectedFails)
	}
	tw.Flush()
	if sum.WatchdogEnded && sum.ProviderFailures > 0 {
		fmt.Fprintf(b, "The watchdog ended the run: %d failed %s and no attempt limit (a poison message is retried for ever).\n",
			sum.ProviderFailures, Plural(sum.ProviderFailures, "call"))
	}
	if len(sum.ProviderCalls) == 0 {
		return
	}
	peak := 0
	for _, c := range sum.ProviderCalls {
		peak = max(peak, c.Calls)
	}
	fmt.Fprintf(b, "\nProvider calls per %s (# answered, x failed):\n", engine.ChartBucket)
	shown := sum.ProviderCalls[:min(len(sum.ProviderCalls), chartBars)]
	for _, c := range shown {
		fail, ok := bar(c.Failed, peak), bar(c.Calls, peak)-bar(c.Failed, peak)
		fmt.Fprintf(b, "  %s %4d %s%s\n", c.From, c.Calls, strings.Repeat("x", fail), strings.Repeat("#", max(ok, 0)))
	}
	if rest := sum.ProviderCalls[len(shown):]; len(rest) > 0 {
		calls, failed := 0, 0
		for _, c := range rest {
			calls, failed = calls+c.Calls, failed+c.Failed
		}
		fmt.Fprintf(b, "  … %d more bars to %s: %d calls, %d failed\n", len(rest), rest[len(rest)-1].From, calls, failed)
	}
}

// chartBars is how many bars of 100 ms the chart draws; the rest are summed on one line.
const chartBars = 30

// bar is n's length on a chart whose longest bar (peak) is chartWidth; at least 1 for any n > 0.
func bar(n, peak int) int {
	if n <= 0 || peak <= 0 {
		return 0
	}
	if peak <= chartWidth {
		return n
	}
	return max(1, n*chartWidth/peak)
}
