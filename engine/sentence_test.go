package engine_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
)

// TestEveryEventIsPutInWordsBySentence: across the built-in lessons, every recorded event's
// words are Sentence's, whoever shows it: the event log (String), the report's timeline and the
// transcript.
func TestEveryEventIsPutInWordsBySentence(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"before", "after", "naive-claim", "stale-owner", "lease-too-short", "aba-fencing", "many-workers"} {
		s := session(t, loadScenario(t, name, ""))
		if err := s.Script().RunToEnd(ctx); err != nil {
			t.Fatal(err)
		}
		rep, err := s.BuildReport(ctx, "", time.Now(), "")
		if err != nil {
			t.Fatal(err)
		}
		var text, md strings.Builder
		if err := words.WriteText(&text, rep); err != nil {
			t.Fatal(err)
		}
		if err := words.WriteMarkdown(&md, rep, nil); err != nil {
			t.Fatal(err)
		}
		left := leftOut(t, md.String())
		if name != "many-workers" && len(left) > 0 {
			t.Errorf("%s: a short lesson's transcript leaves %d steps out", name, len(left))
		}
		kinds := map[engine.EventKind]bool{}
		for _, e := range s.Ledger().Events() {
			words := engine.Sentence(e)
			kinds[e.Kind] = true
			if sub := e.Subject(); !strings.HasPrefix(words, sub) || (sub == "") != (e.Worker == "") {
				t.Errorf("%s event %d: subject %q, words %q", name, e.Seq, sub, words)
			}
			if e.Text != words || e.String() != engine.FormatClock(e.At)+" "+words {
				t.Errorf("%s event %d: Text %q, Sentence %q", name, e.Seq, e.Text, words)
			}
			line := engine.FormatClock(e.At) + "  " + words
			if e.Kind == engine.EvNote {
				line = engine.FormatClock(e.At) + "  note: " + words
			}
			if e.Kind != engine.EvPhase && !strings.Contains(text.String(), line) {
				t.Errorf("%s: the report's timeline lacks %q", name, words)
			}
			if e.Kind != engine.EvPhase && e.Kind != engine.EvNote && !strings.Contains(md.String(), "` "+words) &&
				!strings.ContainsAny(words, "*|`<\\") && !left[e.Seq] {
				t.Errorf("%s: the transcript neither has %q nor counts event %d among the steps it leaves out", name, words, e.Seq)
			}
		}
		if name == "stale-owner" {
			for _, k := range []engine.EventKind{engine.EvClaim, engine.EvCheck, engine.EvPause, engine.EvResume, engine.EvFinalize, engine.EvClock} {
				if !kinds[k] {
					t.Errorf("stale-owner has no %s event", k)
				}
			}
		}
	}
}

// leftOut is the events a long run's transcript counts instead of showing: its lines
// "*N steps (a–b) not shown, …*" (or "(a)").
func leftOut(t *testing.T, md string) map[int]bool {
	t.Helper()
	out := map[int]bool{}
	for _, m := range regexp.MustCompile(`\*([0-9,]+) steps? \(([0-9]+)(?:–([0-9]+))?\) not shown`).FindAllStringSubmatch(md, -1) {
		a, _ := strconv.Atoi(m[2])
		b := a
		if m[3] != "" {
			b, _ = strconv.Atoi(m[3])
		}
		for i := a; i <= b; i++ {
			out[i] = true
		}
	}
	return out
}

// TestSentenceOfEachShape pins the words of event shapes the lessons reach less often.
func TestSentenceOfEachShape(t *testing.T) {
	at := engine.Epoch
	for _, c := range []struct {
		e    engine.Event
		want string
	}{
		{engine.Event{Kind: engine.EvLoad, Worker: "Worker-A", Outcome: engine.OutcomeLoaded, Rows: 3, Key: "PAY-001", Last: "PAY-003"},
			"Worker-A loaded 3 pending rows (PAY-001…PAY-003), no claim"},
		{engine.Event{Kind: engine.EvLoad, Worker: "Worker-A", Outcome: engine.OutcomeLoaded, Rows: 1, Key: "PAY-001", Last: "PAY-001"},
			"Worker-A loaded 1 pending row (PAY-001), no claim"},
		{engine.Event{Kind: engine.EvClaim, Worker: "Worker-A", ID: "Worker-A", Outcome: engine.OutcomeBlocked, Key: "PAY-001", PriorOwner: "Worker-A", Until: at},
			"Worker-A claim BLOCKED: PAY-001 is leased by Worker-A's own attempt from before its restart, until 09:00:00.000Z: it waits like any other worker"},
		{engine.Event{Kind: engine.EvCheck, Worker: "Worker-B", At: at.Add(time.Second), Outcome: engine.OutcomeExpired, Key: "PAY-002", Until: at},
			"Worker-B did not call the provider for PAY-002: its lease ended at 09:00:00.000Z, 1s before the call; it gives the message up and claims again"},
		{engine.Event{Kind: engine.EvCheck, Worker: "Worker-B", At: at, Due: at.Add(20 * time.Millisecond), Outcome: "Paid", TxID: "t1", Key: "PAY-002"},
			"Worker-B is processing PAY-002: called the provider, answer Paid (t1) due at 09:00:00.020Z"},
		{engine.Event{Kind: engine.EvFinalize, Worker: "Worker-B", ID: "Worker-B", Outcome: engine.OutcomeCommitted, Key: "PAY-002", Payment: "Paid", Rows: 1, OwnerCheck: true, Fenced: true, Version: 3},
			"Worker-B finalized PAY-002: payment Paid, outbox Processed (WHERE LockedBy=Worker-B AND LeaseVersion=3, 1 row), committed"},
		{engine.Event{Kind: engine.EvCrash, Worker: "Worker-C", Outcome: engine.OutcomeUnfinished},
			"Worker-C CRASHED with unfinished loaded rows in memory (now lost)"},
	} {
		if got := engine.Sentence(c.e); got != c.want {
			t.Errorf("Sentence:\n got  %q\n want %q", got, c.want)
		}
	}
}
