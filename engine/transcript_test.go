package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
)

// transcript runs a built-in scenario with SQL and moments recorded and returns its Markdown.
func transcript(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	s := session(t, loadScenario(t, name, ""))
	s.TraceSQL(true)
	s.RecordMoments()
	if err := s.Script().RunToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := s.BuildReport(ctx, "", time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := words.WriteMarkdown(&b, rep, s.Moments()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// after returns the text of md after the first line that contains marker, up to the next step.
func stepAfter(t *testing.T, md, marker string) string {
	t.Helper()
	i := strings.Index(md, marker)
	if i < 0 {
		t.Fatalf("transcript lacks %q", marker)
	}
	rest := md[i:]
	if j := strings.Index(rest[1:], "\n**"); j >= 0 {
		rest = rest[:j+1]
	}
	return rest
}

// TestTranscriptOfAfterHasTheFourMoments: the transcript of after shows the recovery demo's
// four moments (claim, crash, blocked before expiry, reclaim after), each in the timeline with
// the outbox table as it was right then, and lists them in the lease-expiry demo.
func TestTranscriptOfAfterHasTheFourMoments(t *testing.T) {
	md := transcript(t, "after")
	for _, m := range []struct{ marker, row string }{
		{"Worker-A claimed PAY-001, lease until 09:00:00.500Z", "| 1 | PAY-001 | Processing | Worker-A | 09:00:00.500Z | 1 | 1 | Pending | NULL |"},
		{"Worker-A CRASHED holding PAY-001", "| 1 | PAY-001 | Processing | Worker-A | 09:00:00.500Z | 1 | 1 | Pending | NULL |"},
		{"Worker-B claim BLOCKED: PAY-001 is leased by Worker-A until 09:00:00.500Z", "| 1 | PAY-001 | Processing | Worker-A | 09:00:00.500Z | 1 | 1 |"},
		{"Worker-B reclaimed PAY-001 from Worker-A", "| 1 | PAY-001 | Processing | Worker-B | 09:00:01.100Z | 2 | 2 |"},
	} {
		step := stepAfter(t, md, m.marker)
		if !strings.Contains(step, "*The outbox table after this:*") || !strings.Contains(step, m.row) {
			t.Errorf("step %q lacks the table row %q:\n%s", m.marker, m.row, step)
		}
	}
	demo := md[strings.Index(md, "## Lease-expiry demo"):]
	for _, want := range []string{"1. **Claim** (step", "2. **Crash** (step", "3. **Blocked before expiry** (step",
		"4. **Reclaimed after expiry** (step", "the lease recovered it"} {
		if !strings.Contains(demo, want) {
			t.Errorf("lease-expiry demo lacks %q:\n%s", want, demo)
		}
	}
	if strings.Contains(demo, "did not happen") {
		t.Errorf("a moment is missing:\n%s", demo)
	}
	for _, want := range []string{"# leaselab transcript: after", "## Settings", "| lease | 500ms |", "```sql",
		"→ COMMIT", "## Outbox at the verdict", "## Ledgers", "## Safety checks", "## Verdict", "ONE OWNER PER MESSAGE"} {
		if !strings.Contains(md, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
}

// TestTranscriptOfStaleOwnerShowsTheRollback: the rejected finalize's SQL is in its step, and the
// table after it still holds Worker-B's payment (txn_PAY-001_2): the ROLLBACK undid Worker-A's.
func TestTranscriptOfStaleOwnerShowsTheRollback(t *testing.T) {
	step := stepAfter(t, transcript(t, "stale-owner"), "Worker-A finalize of PAY-001 REJECTED")
	for _, want := range []string{"LockedBy = 'Worker-A' RETURNING LeaseVersion  → 0 rows", "→ ROLLBACK (the payment update is undone too)",
		"| 1 | PAY-001 | Processed | Worker-B | NULL | 2 | 2 | Paid | txn_PAY-001_2 |"} {
		if !strings.Contains(step, want) {
			t.Errorf("rejected finalize's step lacks %q:\n%s", want, step)
		}
	}
}

// TestTranscriptOfALongRunIsAHandout: the transcript of many-workers (500 messages, 8 workers,
// crashes and pauses) is a handout, not a dump: under 300 KB; its first steps in full; every
// crash, pause and reclaim after them still shown, the routine steps between counted; tables of
// a few rows around the message involved with the rest counted by status; and, at most, the
// moments the handout shows are read and kept, whatever the length of the run.
func TestTranscriptOfALongRunIsAHandout(t *testing.T) {
	md := transcript(t, "many-workers")
	if len(md) > 300_000 {
		t.Errorf("many-workers transcript: %d bytes, want under 300,000", len(md))
	}
	for _, want := range []string{"**1.** ", "**60.** ", "not shown, as the steps above: ", "of 500 rows not shown: "} {
		if !strings.Contains(md, want) {
			t.Errorf("many-workers transcript lacks %q", want)
		}
	}
	tables := strings.Count(md, "| Id | Key | Status |")
	if rows := strings.Count(md, "\n| ") - 2*tables; rows > tables*12 {
		t.Errorf("%d table rows in %d tables: more than 12 a table", rows, tables)
	}
	s := session(t, loadScenario(t, "many-workers", ""))
	s.RecordMoments()
	if err := s.Script().RunToEnd(context.Background()); err != nil {
		t.Fatal(err)
	}
	reclaims, crashes := 0, 0
	for _, e := range s.Ledger().Events() {
		if e.Seq > 60 && e.Kind == engine.EvClaim && e.Outcome == engine.OutcomeReclaimed {
			reclaims++
		}
		if e.Kind == engine.EvCrash {
			crashes++
		}
	}
	if reclaims == 0 || crashes == 0 {
		t.Fatalf("many-workers had %d crashes and %d reclaims after step 60: the test needs both", crashes, reclaims)
	}
	steps := md[strings.Index(md, "## Steps"):strings.Index(md, "## Outbox at the verdict")]
	if i := strings.Index(steps, "## Lease-expiry demo"); i >= 0 {
		steps = steps[:i] // the timeline's own, not the demo's list
	}
	if got := strings.Count(steps, " CRASHED"); got < crashes {
		t.Errorf("the timeline shows %d crashes of %d", got, crashes)
	}
	if got := strings.Count(steps, " reclaimed PAY-"); got < reclaims {
		t.Errorf("the transcript shows %d reclaims of the %d after step 60", got, reclaims)
	}
	ms := s.Moments()
	if len(ms) > 150 {
		t.Errorf("%d moments kept, want at most 150", len(ms))
	}
	for seq, m := range ms {
		if len(m.Rows) > 12 || m.Total != 500 {
			t.Errorf("moment %d: %d rows kept of %d", seq, len(m.Rows), m.Total)
		}
	}
}
