// Package words puts a finished run in words: the report leaselab run prints (WriteText), the
// Markdown transcript (WriteMarkdown, its files opened by the caller through Files), the table
// comparing runs, a trace's SQL lines, and Escape, the one way text from a file or a database
// reaches a terminal. It imports engine; engine does not import it.
package words

import (
	"fmt"
	"io"
	"leaselab/engine"
	"strings"
	"text/tabwriter"
	"time"
)

// HeaderLines is how many lines of WriteText's output depend on the wall clock or the database
// path; everything after them is a pure function of the scenario, the seed and the schedule.
const HeaderLines = 4

// WriteText prints the report r as text.
func WriteText(out io.Writer, r *engine.Report) error {
	sum := r.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "LEASELAB RUN REPORT: %s\n", sum.Scenario)
	fmt.Fprintf(&b, "Run at:   %s\n", r.RunAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Database: %s", sum.Database)
	if r.DBNote != "" {
		fmt.Fprintf(&b, " (%s)", r.DBNote)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%s\n", sum.Title)
	for _, l := range r.Explain {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintf(&b, "Settings: %s\n", settingsLine(sum.Settings))

	section(&b, "Schema")
	b.WriteString(r.Schema + "\n")

	section(&b, "Timeline (scenario clock)")
	timeline(r, &b)

	recoveries(sum, &b)

	section(&b, "Per-message ownership (database rows, and who processed them)")
	ownership(r, &b)

	section(&b, "Ledgers (claims and processing are counted apart)")
	ledgers(r, &b)

	verdict(sum, &b)
	_, err := io.WriteString(out, b.String())
	return err
}

// recoveries is the lease-expiry demo: each crashed owner's message, blocked before its lease
// ended and reclaimed after (nothing when no owner crashed holding a lease).
func recoveries(sum *engine.Summary, b *strings.Builder) {
	if len(sum.Recovery) == 0 {
		return
	}
	section(b, "Lease-expiry demo")
	for _, rc := range sum.Recovery {
		fmt.Fprintf(b, "%s: %s claimed it, then crashed at %s; lease until %s\n", Escape(rc.Key), rc.CrashedOwner, rc.CrashedAt, rc.LeaseUntil)
		fmt.Fprintf(b, "  blocked before expiry:   %v\n", rc.BlockedBeforeExpiry)
		fmt.Fprintf(b, "  reclaimed after expiry:  %v", rc.ReclaimedAfterExpiry)
		switch {
		case rc.ReclaimedBy != "" && rc.ReclaimedAfterExpiry:
			fmt.Fprintf(b, " (%s at %s)", rc.ReclaimedBy, rc.ReclaimedAt)
		case rc.ReclaimedBy != "":
			fmt.Fprintf(b, " (%s took it at %s, over the live lease)", rc.ReclaimedBy, rc.ReclaimedAt)
		}
		fmt.Fprintf(b, "\n  processed:               %d %s\n", rc.ProcessedTimes, Plural(rc.ProcessedTimes, "time"))
		if rc.OK {
			b.WriteString("  A lock would have lost this message; the lease recovered it.\n")
		}
	}
	if more := sum.CrashedOwners - len(sum.Recovery); more > 0 {
		fmt.Fprintf(b, "… and %d more crashed owners holding a lease, not listed (%d of all %d recovered: reclaimed after expiry, processed once)\n",
			more, sum.Recovered, sum.CrashedOwners)
	}
}

// verdict is the report's end: the safety checks, the scenario's expectations and the verdict.
func verdict(sum *engine.Summary, b *strings.Builder) {
	section(b, "Safety checks")
	for _, c := range sum.Checks {
		note := ""
		if !c.Decides {
			note = "  (not part of this lesson's verdict)"
		}
		fmt.Fprintf(b, "[%s] %s: %s%s\n", passWord(c.OK), c.Name, c.Detail, note)
	}

	section(b, "Expectations (declared by the scenario)")
	for _, e := range sum.Expectations {
		when := ""
		if e.When != "" {
			when = " when " + e.When
		}
		line := ""
		if e.Line > 0 {
			line = fmt.Sprintf("  (line %d)", e.Line)
		}
		fmt.Fprintf(b, "[%s] %s%s: got %s%s\n", expectWord(e), e.Expect, when, e.Actual, line)
	}
	if sum.ExpectationsNotJudged != "" {
		fmt.Fprintf(b, "Not judged: %s.\n", sum.ExpectationsNotJudged)
	}

	section(b, "Verdict")
	fmt.Fprintf(b, "%s\n", sum.Verdict)
	switch {
	case sum.ExpectationsNotJudged != "":
		b.WriteString("The expectations were not judged (see above); the verdict is the safety checks' alone.\n")
	case sum.ExpectationsMet:
		b.WriteString("The run did what the scenario expects.\n")
	default:
		b.WriteString("THE RUN DID NOT DO WHAT THE SCENARIO EXPECTS.\n")
	}
}

func section(b *strings.Builder, title string) {
	fmt.Fprintf(b, "\n== %s ==\n", title)
}

func passWord(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// expectWord is an expectation's mark: ok, NOT MET, or not judged (the run left its script).
func expectWord(e engine.ExpectResult) string {
	if e.NotJudged {
		return "not judged"
	}
	return okWord(e.OK)
}

func okWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "NOT MET"
}

func settingsLine(m map[string]string) string {
	parts := []string{}
	for _, t := range engine.ToggleNames() {
		parts = append(parts, t+"="+m[t])
	}
	for _, t := range engine.ToggleNamesIn(engine.InRescue) {
		if v, ok := m[t]; ok { // only in a run that uses it
			parts = append(parts, t+"="+v)
		}
	}
	if v, ok := m["skew"]; ok {
		parts = append(parts, "skew="+v)
	}
	parts = append(parts, "lease="+m["lease"])
	if m[engine.ToggleHeartbeat] == "on" {
		parts = append(parts, "heartbeat-every="+m["heartbeat-every"])
	}
	if m["provider-latency"] != "0s" {
		parts = append(parts, "provider-latency="+m["provider-latency"])
	}
	parts = append(parts, retrySettings(m)...)
	return strings.Join(parts, " ")
}

func timeline(r *engine.Report, b *strings.Builder) {
	prev := 0
	for _, e := range r.Events {
		if e.Seq > prev+1 && prev > 0 {
			// The ledger keeps the first and the latest events of a long run (MaxEventsKept).
			fmt.Fprintf(b, "   … %d events not kept here (every count below is from the ledgers, not from this list) …\n", e.Seq-prev-1)
		}
		prev = e.Seq
		text := Escape(e.Text) // it may quote a key or a LockedBy read from the database
		switch e.Kind {
		case engine.EvPhase:
			fmt.Fprintf(b, "-- %s\n", text)
		case engine.EvNote:
			fmt.Fprintf(b, "   %s  note: %s\n", engine.FormatClock(e.At), text)
		default:
			fmt.Fprintf(b, "   %s  %s\n", engine.FormatClock(e.At), Escape(e.Words()))
		}
		if r.SQL {
			for _, l := range SQLLines(e.Trace) {
				fmt.Fprintf(b, "%s  sql: %s\n", strings.Repeat(" ", 3+len("09:00:00.000Z")), Escape(l))
			}
		}
	}
	if len(r.Events) == 0 {
		b.WriteString("   (nothing happened)\n")
	}
}

func ownership(r *engine.Report, b *strings.Builder) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Key\tStatus\tLockedBy\tLockedUntilUtc\tProcessedAtUtc\tPayment\tTransactionId\tClaims\tVersion\tProcessed by")
	for _, row := range r.Rows {
		var by []string
		for _, a := range r.Attempts[row.IdempotencyKey] {
			by = append(by, strings.TrimPrefix(a.Worker, "Worker-"))
		}
		who := strings.Join(by, ",")
		if who == "" {
			who = "-"
		}
		if len(by) > 1 {
			who += fmt.Sprintf("  (%d×)", len(by))
		}
		// Row values come from a database any process can write: printed escaped.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", Escape(row.IdempotencyKey), Escape(row.Status), orNull(Escape(row.LockedBy)),
			clockOrNull(row.LockedUntil), clockOrNull(row.ProcessedAt), Escape(row.PaymentStatus), orNull(Escape(row.TransactionID)),
			row.Attempts, row.LeaseVersion, who)
	}
	tw.Flush()
	if more := r.RowsTotal - len(r.Rows); more > 0 {
		fmt.Fprintf(b, "… and %d more %s, not listed (the counts and checks cover every row)\n", more, Plural(more, "row"))
	}
}

func clockOrNull(t time.Time) string {
	if t.IsZero() {
		return "NULL"
	}
	return engine.FormatClock(t)
}

func ledgers(r *engine.Report, b *strings.Builder) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\t%s\tTotal\t\n", strings.Join(r.Workers, "\t"))
	line := func(name string, get func(engine.WorkerLedger) int) {
		fmt.Fprintf(tw, "%s\t", name)
		t := 0
		for _, w := range r.Workers {
			v := get(r.Ledgers[w])
			t += v
			fmt.Fprintf(tw, "%d\t", v)
		}
		fmt.Fprintf(tw, "%d\t\n", t)
	}
	line("Rows loaded (no claim)", func(l engine.WorkerLedger) int { return l.RowsLoaded })
	line("Claims won", func(l engine.WorkerLedger) int { return l.ClaimsWon })
	line("  of which reclaims", func(l engine.WorkerLedger) int { return l.Reclaims })
	line("Claims empty", func(l engine.WorkerLedger) int { return l.ClaimsEmpty })
	line("Claims blocked (live lease)", func(l engine.WorkerLedger) int { return l.ClaimsBlocked })
	if r.Summary.ClaimsBackoff > 0 {
		line("Claims waiting (backoff)", func(l engine.WorkerLedger) int { return l.ClaimsBackoff })
	}
	if r.Summary.LockWaits > 0 || r.Summary.Backend != "" {
		line("  of which waited for a row lock", func(l engine.WorkerLedger) int { return l.LockWaits })
	}
	line("Processing attempts", func(l engine.WorkerLedger) int { return l.ProcessingAttempts })
	line("Finalizes committed", func(l engine.WorkerLedger) int { return l.Finalized })
	line("Finalizes rejected (0 rows)", func(l engine.WorkerLedger) int { return l.RejectedFinalizes })
	line("Ownership violations", func(l engine.WorkerLedger) int { return l.OwnershipViolations })
	line("Heartbeat renewals", func(l engine.WorkerLedger) int { return l.Renewals })
	line("Busy retries", func(l engine.WorkerLedger) int { return l.BusyRetries })
	line("Crashes", func(l engine.WorkerLedger) int { return l.Crashes })
	tw.Flush()
	sum := r.Summary
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nUnique messages processed\t%d of %d\n", sum.UniqueProcessed, sum.Messages)
	fmt.Fprintf(tw, "Messages processed more than once\t%d\n", sum.ProcessedMoreThanOnce)
	fmt.Fprintf(tw, "  by two owners at once (a safety failure)\t%d\n", sum.ProcessedByTwoOwners)
	fmt.Fprintf(tw, "  again after a lost lease (at-least-once)\t%d\n", sum.ReprocessedAfterLostLease)
	if sum.ReprocessedBySameWorker > 0 {
		fmt.Fprintf(tw, "  again by the same worker (one owner at a time)\t%d\n", sum.ReprocessedBySameWorker)
	}
	fmt.Fprintf(tw, "Provider status-check calls (provider's count)\t%d\n", sum.StatusChecks)
	fmt.Fprintf(tw, "Payment creation calls (gateway)\t%d (%d in workers)\n", sum.CreationCalls, sum.CreationCallsInWorker)
	fmt.Fprintf(tw, "Payments Paid / Failed / Pending\t%d / %d / %d\n", sum.Payments.Paid, sum.Payments.Failed, sum.Payments.Pending)
	fmt.Fprintf(tw, "Outbox Processed / Pending / Processing\t%d / %d / %d\n", sum.Outbox.Processed, sum.Outbox.Pending, sum.Outbox.Processing)
	fmt.Fprintf(tw, "Duplicate payment / outbox rows\t%d\n", sum.DuplicateRows)
	if sum.LockWaits > 0 || sum.Backend != "" {
		fmt.Fprintf(tw, "Claims that waited for a row lock\t%d (%d ms in all)\n", sum.LockWaits, sum.LockWaitedMS)
	}
	tw.Flush()
	writeRetries(b, sum)
	if sum.ReprocessedAfterLostLease > 0 {
		b.WriteString("\nAt-least-once: a worker crashed or stalled after calling the provider and lost its lease; another\n" +
			"reclaimed the message after the lease had ended and called the provider again. No lease prevents\n" +
			"that (the idempotency key makes the second call harmless); the outcome was still written once.\n")
	}
}

// WriteCompare prints one table of several runs' ledgers side by side, one column per run.
func WriteCompare(out io.Writer, labels []string, sums []*engine.Summary) error {
	if len(sums) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s: %s\n\n", sums[0].Scenario, sums[0].Title)
	fmt.Fprintf(tw, "\t%s\t\n", strings.Join(labels, "\t"))
	row := func(name string, get func(*engine.Summary) string) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, s := range sums {
			fmt.Fprintf(tw, "%s\t", get(s))
		}
		fmt.Fprintln(tw)
	}
	num := func(f func(*engine.Summary) int) func(*engine.Summary) string {
		return func(s *engine.Summary) string { return fmt.Sprint(f(s)) }
	}
	row("settings", func(s *engine.Summary) string {
		return fmt.Sprintf("leasing=%s fencing=%s", s.Settings[engine.ToggleLeasing], s.Settings[engine.ToggleFencing])
	})
	row("messages", num(func(s *engine.Summary) int { return s.Messages }))
	row("rows loaded (no claim)", num(func(s *engine.Summary) int { return s.RowsLoaded }))
	row("claims won", num(func(s *engine.Summary) int { return s.ClaimsWon }))
	row("claims empty", num(func(s *engine.Summary) int { return s.ClaimsEmpty }))
	row("claims blocked", num(func(s *engine.Summary) int { return s.ClaimsBlocked }))
	row("processing attempts", num(func(s *engine.Summary) int { return s.ProcessingAttempts }))
	row("provider status checks", num(func(s *engine.Summary) int { return s.StatusChecks }))
	row("processed more than once", num(func(s *engine.Summary) int { return s.ProcessedMoreThanOnce }))
	row("  by two owners at once", num(func(s *engine.Summary) int { return s.ProcessedByTwoOwners }))
	row("  after a lost lease", num(func(s *engine.Summary) int { return s.ReprocessedAfterLostLease }))
	row("finalized more than once", num(func(s *engine.Summary) int { return s.FinalizedMoreThanOnce }))
	row("rejected finalizes", num(func(s *engine.Summary) int { return s.RejectedFinalizes }))
	row("ownership violations", num(func(s *engine.Summary) int { return s.OwnershipViolations }))
	row("lost", num(func(s *engine.Summary) int { return s.Lost }))
	row("Paid / Failed / Pending", func(s *engine.Summary) string {
		return fmt.Sprintf("%d / %d / %d", s.Payments.Paid, s.Payments.Failed, s.Payments.Pending)
	})
	row("checks passed", func(s *engine.Summary) string {
		ok := 0
		for _, c := range s.Checks {
			if c.OK {
				ok++
			}
		}
		return fmt.Sprintf("%d of %d", ok, len(s.Checks))
	})
	row("verdict", func(s *engine.Summary) string { return PassFail(s.Passed) })
	return tw.Flush()
}
