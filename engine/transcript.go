package engine

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteMarkdown writes the run as a Markdown transcript, a handout that reads well on GitHub
// and printed: the settings, each event in words with the SQL its action ran, the outbox table
// at the moments that matter (moments, from Session.Moments; none when nil), the lease-expiry
// demo, the ledgers, the checks and the verdict. Everything in it is counted from the run.
func (r *Report) WriteMarkdown(out io.Writer, moments map[int]Moment) error {
	sum := r.Summary
	var b strings.Builder
	fmt.Fprintf(&b, "# leaselab transcript: %s\n\n", md(sum.Scenario))
	fmt.Fprintf(&b, "**%s**\n\n", md(sum.Title))
	for _, l := range r.Explain {
		fmt.Fprintf(&b, "> %s\n", md(l))
	}
	if len(r.Explain) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Run at %s on `%s`", r.RunAt.UTC().Format(time.RFC3339), code(sum.Database))
	if r.DBNote != "" {
		fmt.Fprintf(&b, " (%s)", md(r.DBNote))
	}
	b.WriteString(".\n\n## Settings\n\n| Setting | Value |\n|---|---|\n")
	for _, k := range sortedKeys(sum.Settings) {
		fmt.Fprintf(&b, "| %s | %s |\n", md(k), md(sum.Settings[k]))
	}

	b.WriteString("\n## Steps\n")
	r.mdSteps(&b, moments)
	if len(sum.Recovery) > 0 {
		b.WriteString("\n## Lease-expiry demo\n")
		r.mdRecovery(&b)
	}
	b.WriteString("\n## Outbox at the verdict\n\n")
	mdRows(&b, r.Rows)
	b.WriteString("\n## Ledgers\n\n```text\n")
	r.ledgers(&b)
	b.WriteString("```\n\n## Safety checks\n\n")
	for _, c := range sum.Checks {
		note := ""
		if !c.Decides {
			note = " *(not part of this lesson's verdict)*"
		}
		fmt.Fprintf(&b, "- **%s** %s: %s%s\n", passWord(c.OK), md(c.Name), md(c.Detail), note)
	}
	if len(sum.Expectations) > 0 {
		b.WriteString("\n## Expectations (declared by the scenario)\n\n")
		for _, e := range sum.Expectations {
			when := ""
			if e.When != "" {
				when = " when " + e.When
			}
			fmt.Fprintf(&b, "- **%s** `%s`%s: got %s\n", okWord(e.OK), code(e.Expect), md(when), md(e.Actual))
		}
	}
	fmt.Fprintf(&b, "\n## Verdict\n\n**%s**\n", md(sum.Verdict))
	_, err := io.WriteString(out, b.String())
	return err
}

// mdSteps writes the timeline: a heading per phase, a numbered line per event with its SQL,
// and the outbox table after each moment.
func (r *Report) mdSteps(b *strings.Builder, moments map[int]Moment) {
	if len(r.Events) == 0 {
		b.WriteString("\nNothing happened.\n")
	}
	for _, e := range r.Events {
		switch e.Kind {
		case EvPhase:
			fmt.Fprintf(b, "\n### %s\n", md(e.Words()))
			continue
		case EvNote:
			fmt.Fprintf(b, "\n**%d.** `%s` *note: %s*\n", e.Seq, FormatClock(e.At), md(e.Words()))
			continue
		}
		// Steps are numbered by the event's Seq in bold, not as a Markdown list: a list would
		// be renumbered from its first item by the renderer.
		fmt.Fprintf(b, "\n**%d.** `%s` %s\n", e.Seq, FormatClock(e.At), md(e.Words()))
		if lines := SQLLines(e.Trace); len(lines) > 0 {
			b.WriteString("\n```sql\n")
			for _, l := range lines {
				b.WriteString(fence(l) + "\n")
			}
			b.WriteString("```\n")
		}
		if m, ok := moments[e.Seq]; ok {
			b.WriteString("\n*The outbox table after this:*\n\n")
			if m.Err != nil {
				fmt.Fprintf(b, "(could not be read: %s)\n", md(m.Err.Error()))
				continue
			}
			mdRows(b, m.Rows)
		}
	}
}

// mdRecovery is the lease-expiry demo's four moments for each crashed owner: the claim, the
// crash, a claim blocked before the lease ended, the reclaim after.
func (r *Report) mdRecovery(b *strings.Builder) {
	for _, rc := range r.Summary.Recovery {
		fmt.Fprintf(b, "\n**%s**, processed %d %s:\n\n", md(rc.Key), rc.ProcessedTimes, plural(rc.ProcessedTimes, "time"))
		claim, crash, blocked, reclaim := r.recoveryEvents(rc)
		for i, m := range []struct {
			what string
			e    *Event
		}{{"Claim", claim}, {"Crash", crash}, {"Blocked before expiry", blocked}, {"Reclaimed after expiry", reclaim}} {
			if m.e == nil {
				fmt.Fprintf(b, "%d. **%s**: did not happen\n", i+1, m.what)
				continue
			}
			fmt.Fprintf(b, "%d. **%s** (step %d): `%s` %s\n", i+1, m.what, m.e.Seq, FormatClock(m.e.At), md(m.e.Words()))
		}
		if rc.OK {
			b.WriteString("\nA lock would have lost this message; the lease recovered it.\n")
		}
	}
}

// recoveryEvents finds the four moments of rc in the timeline.
func (r *Report) recoveryEvents(rc Recovery) (claim, crash, blocked, reclaim *Event) {
	for i := range r.Events {
		e := &r.Events[i]
		if e.Key != rc.Key {
			continue
		}
		switch {
		case crash == nil && e.Kind == EvClaim && e.Worker == rc.CrashedOwner && e.SetsLease():
			claim = e
		case crash == nil && claim != nil && e.Kind == EvCrash:
			crash = e
		case crash != nil && reclaim == nil && e.Kind == EvClaim && e.Outcome == OutcomeBlocked && blocked == nil:
			blocked = e
		case crash != nil && reclaim == nil && e.Kind == EvClaim && e.Outcome == OutcomeReclaimed:
			reclaim = e
		}
	}
	return claim, crash, blocked, reclaim
}

// mdRows is an outbox table as a Markdown table.
func mdRows(b *strings.Builder, rows []Row) {
	b.WriteString("| Id | Key | Status | LockedBy | LockedUntilUtc | LeaseVersion | Attempts | Payment | TransactionId |\n")
	b.WriteString("|---:|---|---|---|---|---:|---:|---|---|\n")
	for _, row := range rows {
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %d | %d | %s | %s |\n", row.ID, md(row.IdempotencyKey), md(row.Status),
			md(orNone(row.LockedBy)), clockOrNull(row.LockedUntil), row.LeaseVersion, row.Attempts,
			md(row.PaymentStatus), md(orNone(row.TransactionID)))
	}
	if len(rows) == 0 {
		b.WriteString("| | (no rows) | | | | | | | |\n")
	}
}

// md makes data safe in Markdown text and table cells: no control characters (a database value
// can carry ESC sequences), no line breaks, and the characters Markdown would read as markup here
// escaped (GitHub ignores _ inside words, so it stays).
func md(s string) string {
	s = printable(s)
	r := strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "`", "\\`", "<", "&lt;")
	return r.Replace(s)
}

// code makes s safe inside an inline code span.
func code(s string) string { return strings.ReplaceAll(printable(s), "`", "'") }

// fence makes s safe inside a fenced code block.
func fence(s string) string { return strings.ReplaceAll(printable(s), "```", "'''") }

// printable replaces control characters (and line breaks) with spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}
