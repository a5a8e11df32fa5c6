package words

import (
	"fmt"
	"io"
	"leaselab/engine"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
)

// WriteMarkdown writes the run as a Markdown transcript, a handout that reads well on GitHub
// and printed: the settings, each event in words with the SQL its action ran, the outbox table
// at the moments that matter (moments, from Session.Moments; none when nil), the lease-expiry
// demo, the ledgers, the checks and the verdict. Everything in it is counted from the run.
func WriteMarkdown(out io.Writer, r *engine.Report, moments map[int]engine.Moment) error {
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
	mdIncident(&b, r.Incident)
	fmt.Fprintf(&b, "Run at %s on `%s`", r.RunAt.UTC().Format(time.RFC3339), code(sum.Database))
	if r.DBNote != "" {
		fmt.Fprintf(&b, " (%s)", md(r.DBNote))
	}
	b.WriteString(".\n\n## Settings\n\n| Setting | Value |\n|---|---|\n")
	for _, k := range slices.Sorted(maps.Keys(sum.Settings)) {
		fmt.Fprintf(&b, "| %s | %s |\n", md(k), md(sum.Settings[k]))
	}

	if r.Picture != "" {
		fmt.Fprintf(&b, "\n## Space-time diagram\n\n![The run as a space-time diagram: a lane per worker, a bar per lease from its claim to its LockedUntilUtc](%s)\n",
			mdLink(r.Picture))
	}
	b.WriteString("\n## Steps\n")
	mdSteps(r, &b, moments)
	if len(sum.Recovery) > 0 {
		b.WriteString("\n## Lease-expiry demo\n")
		mdRecovery(r, &b)
	}
	b.WriteString("\n## Outbox at the verdict\n\n")
	mdMoment(&b, engine.TableAt(r.Rows, func(row engine.Row) bool { return row.Status != engine.StatusProcessed }))
	b.WriteString("\n## Ledgers\n\n```text\n")
	ledgers(r, &b)
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
			fmt.Fprintf(&b, "- **%s** `%s`%s: got %s\n", expectWord(e), code(e.Expect), md(when), md(e.Actual))
		}
		if sum.ExpectationsNotJudged != "" {
			fmt.Fprintf(&b, "\n*Not judged: %s.*\n", md(sum.ExpectationsNotJudged))
		}
	}
	if n := len(r.Questions); n > 0 {
		right := 0
		for _, a := range r.Questions {
			if a.Right() {
				right++
			}
		}
		fmt.Fprintf(&b, "\n## Questions\n\n%d of %d answered right (each is in the steps where it was asked).\n", right, n)
	}
	fmt.Fprintf(&b, "\n## Verdict\n\n**%s**\n", md(sum.Verdict))
	_, err := io.WriteString(out, b.String())
	return err
}

// mdLink is a relative file name as a Markdown link's target: escaped as a URL path, and its
// parentheses too, which would end the link.
func mdLink(name string) string {
	return strings.NewReplacer("(", "%28", ")", "%29").Replace((&url.URL{Path: name}).String())
}

// mdAsked writes a question where it was asked, with the answer given and the answer the run
// gave (Observed): what its step did, read from the run.
func mdAsked(b *strings.Builder, a engine.Asked) {
	q, o := a.Question, a.Observed
	fmt.Fprintf(b, "\n> **Question:** %s\n>\n", md(q.Text))
	for i, ans := range q.Answers {
		mark := ""
		right := o.Known && i == o.Right
		switch {
		case i == a.Picked && right:
			mark = " — *answered, right*"
		case i == a.Picked:
			mark = " — *answered*"
		case right:
			mark = " — *the right answer*"
		}
		fmt.Fprintf(b, "> %c. %s%s\n", 'A'+rune(i), md(ans), mark)
	}
	var why string
	switch {
	case !o.Known:
		why = "Not graded yet: its answer is known " + o.Waiting + "."
	case o.Right < 0:
		why = "None of the answers describes what happened (" + o.Words + "): not scored."
		if o.Because != "" {
			why += " " + o.Because
		}
	case o.Legacy && o.When != "":
		why = "(with " + o.When + ") " + o.Because
	case o.Legacy:
		why = o.Because
	default:
		why = "What happened: " + o.Words + ". " + o.Because
	}
	if why = strings.TrimSpace(why); why != "" {
		fmt.Fprintf(b, ">\n> %s\n", md(why))
	}
}

// mdSteps writes the timeline: a heading per phase, a numbered line per event with its SQL,
// and the outbox table after each moment; of a long run, what HandoutPlan shows, the routine
// steps between counted, and the events the log did not keep named.
func mdSteps(r *engine.Report, b *strings.Builder, moments map[int]engine.Moment) {
	if len(r.Events) == 0 {
		b.WriteString("\nNothing happened.\n")
	}
	var (
		plan    engine.HandoutPlan
		skipped routineSteps
		last    int // the Seq of the last event walked
		asked   = r.Questions
	)
	for _, e := range r.Events {
		for len(asked) > 0 && asked[0].BeforeSeq <= e.Seq {
			skipped.flush(b)
			mdAsked(b, asked[0])
			asked = asked[1:]
		}
		if e.Seq > last+1 {
			skipped.flush(b)
			fmt.Fprintf(b, "\n*Events %d–%d were not kept: the log keeps the first %s and the latest %s events of a run (every count above and below is of the whole run).*\n",
				last+1, e.Seq-1, Thousands(engine.KeepHead), Thousands(engine.KeepTail))
		}
		last = e.Seq
		if !plan.Shows(e) {
			skipped.add(e)
			continue
		}
		skipped.flush(b)
		switch e.Kind {
		case engine.EvPhase:
			fmt.Fprintf(b, "\n### %s\n", md(e.Words()))
			continue
		case engine.EvNote:
			fmt.Fprintf(b, "\n**%d.** `%s` *note: %s*\n", e.Seq, engine.FormatClock(e.At), md(e.Words()))
			continue
		}
		// Steps are numbered by the event's Seq in bold, not as a Markdown list: a list would
		// be renumbered from its first item by the renderer.
		fmt.Fprintf(b, "\n**%d.** `%s` %s\n", e.Seq, engine.FormatClock(e.At), md(e.Words()))
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
			mdMoment(b, m)
		}
	}
	skipped.flush(b)
	for _, a := range asked { // asked after the last event (the step did nothing)
		mdAsked(b, a)
	}
}

// routineSteps counts the events a long run's handout leaves out between two it shows.
type routineSteps struct {
	first, last int
	n           int
	kinds       []string       // "claims won", in the order first seen
	count       map[string]int // by kind
}

func (s *routineSteps) add(e engine.Event) {
	if s.n == 0 {
		s.first, s.count, s.kinds = e.Seq, map[string]int{}, s.kinds[:0]
	}
	s.last = e.Seq
	s.n++
	k := string(e.Kind)
	if e.Outcome != "" {
		k += " " + e.Outcome
	}
	if s.count[k] == 0 {
		s.kinds = append(s.kinds, k)
	}
	s.count[k]++
}

// flush writes the count of the steps left out since the last event shown, if any.
func (s *routineSteps) flush(b *strings.Builder) {
	if s.n == 0 {
		return
	}
	parts := make([]string, len(s.kinds))
	for i, k := range s.kinds {
		parts[i] = fmt.Sprintf("%s ×%s", md(k), Thousands(s.count[k]))
	}
	what := fmt.Sprintf("%s %s", Thousands(s.n), Plural(s.n, "step"))
	if s.first != s.last {
		what += fmt.Sprintf(" (%d–%d)", s.first, s.last)
	} else {
		what += fmt.Sprintf(" (%d)", s.first)
	}
	fmt.Fprintf(b, "\n*%s not shown, as the steps above: %s.*\n", what, strings.Join(parts, ", "))
	s.n = 0
}

// mdRecovery is the lease-expiry demo's four moments for each crashed owner: the claim, the
// crash, a claim blocked before the lease ended, the reclaim after.
func mdRecovery(r *engine.Report, b *strings.Builder) {
	for _, rc := range r.Summary.Recovery {
		fmt.Fprintf(b, "\n**%s**, processed %d %s:\n\n", md(rc.Key), rc.ProcessedTimes, Plural(rc.ProcessedTimes, "time"))
		claim, crash, blocked, reclaim := recoveryEvents(r, rc)
		for i, m := range []struct {
			what string
			e    *engine.Event
		}{{"Claim", claim}, {"Crash", crash}, {"Blocked before expiry", blocked}, {reclaimedWhat(rc), reclaim}} {
			if m.e == nil {
				fmt.Fprintf(b, "%d. **%s**: did not happen\n", i+1, m.what)
				continue
			}
			fmt.Fprintf(b, "%d. **%s** (step %d): `%s` %s\n", i+1, m.what, m.e.Seq, engine.FormatClock(m.e.At), md(m.e.Words()))
		}
		if rc.OK {
			b.WriteString("\nA lock would have lost this message; the lease recovered it.\n")
		}
	}
}

// reclaimedWhat names the recovery's last moment as Recovery.Words does: a reclaim after the
// lease ended, or a take over the live lease.
func reclaimedWhat(rc engine.Recovery) string {
	if rc.ReclaimedBy != "" && !rc.ReclaimedAfterExpiry {
		return "Taken over the live lease"
	}
	return "Reclaimed after expiry"
}

// recoveryEvents finds the four moments of rc in the timeline.
func recoveryEvents(r *engine.Report, rc engine.Recovery) (claim, crash, blocked, reclaim *engine.Event) {
	for i := range r.Events {
		e := &r.Events[i]
		if e.Key != rc.Key {
			continue
		}
		switch {
		case crash == nil && e.Kind == engine.EvClaim && e.Worker == rc.CrashedOwner && e.SetsLease():
			claim = e
		case crash == nil && claim != nil && e.Kind == engine.EvCrash:
			crash = e
		case crash != nil && reclaim == nil && e.BlockedByLease() && blocked == nil:
			blocked = e
		case crash != nil && reclaim == nil && e.TakesOver() && e.Worker == rc.ReclaimedBy:
			reclaim = e
		}
	}
	return claim, crash, blocked, reclaim
}

// mdMoment is a moment's table, and what an excerpt leaves out.
func mdMoment(b *strings.Builder, m engine.Moment) {
	mdRows(b, m.Rows)
	if !m.Excerpt() {
		return
	}
	var parts []string
	for _, st := range []string{engine.StatusPending, engine.StatusProcessing, engine.StatusProcessed} {
		if n := m.Hidden[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", Thousands(n), st))
		}
	}
	for _, st := range slices.Sorted(maps.Keys(m.Hidden)) {
		if st != engine.StatusPending && st != engine.StatusProcessing && st != engine.StatusProcessed {
			parts = append(parts, fmt.Sprintf("%s %s", Thousands(m.Hidden[st]), md(st)))
		}
	}
	fmt.Fprintf(b, "\n*%s of %s rows not shown: %s.*\n", Thousands(m.Total-len(m.Rows)), Thousands(m.Total), strings.Join(parts, ", "))
}

// mdRows is an outbox table as a Markdown table.
func mdRows(b *strings.Builder, rows []engine.Row) {
	b.WriteString("| Id | Key | Status | LockedBy | LockedUntilUtc | LeaseVersion | Attempts | Payment | TransactionId |\n")
	b.WriteString("|---:|---|---|---|---|---:|---:|---|---|\n")
	for _, row := range rows {
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %d | %d | %s | %s |\n", row.ID, md(row.IdempotencyKey), md(row.Status),
			md(orNull(row.LockedBy)), clockOrNull(row.LockedUntil), row.LeaseVersion, row.Attempts,
			md(row.PaymentStatus), md(orNull(row.TransactionID)))
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

// Thousands writes n with a comma between groups of three digits: 15,000.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
