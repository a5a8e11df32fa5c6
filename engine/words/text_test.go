package words

import (
	"strings"
	"testing"

	"leaselab/engine"
)

// The report's timeline marks the events the log did not keep.
func TestTimelineMarksTheGap(t *testing.T) {
	evs := []engine.Event{{Seq: 1, Kind: engine.EvNote, Text: "first"}, {Seq: 40125, Kind: engine.EvNote, Text: "last"}}
	var b strings.Builder
	timeline(&engine.Report{Events: evs}, &b)
	if !strings.Contains(b.String(), "… 40123 events not kept here") {
		t.Errorf("timeline gap line missing: %s", b.String())
	}
}

// The report prints what the database holds escaped: a LockedBy (or a key) that another
// process wrote with terminal escapes reaches the report, and stdout, as visible text.
func TestReportEscapesDatabaseValues(t *testing.T) {
	rep := &engine.Report{Summary: &engine.Summary{Scenario: "x"},
		Rows:   []engine.Row{{ID: 1, IdempotencyKey: "PAY-\x1b[31m", Status: engine.StatusProcessing, LockedBy: "Ev\x1b]0;x\x07", TransactionID: "tx\u009b"}},
		Events: []engine.Event{{Seq: 1, Kind: engine.EvClaim, Text: "Worker-A claim BLOCKED: PAY-001 is leased by Ev\x1b]0;x\x07"}}}
	var b strings.Builder
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\u009b") {
		t.Fatalf("raw control characters in the report:\n%q", out)
	}
	for _, want := range []string{`PAY-\x1b[31m`, `Ev\x1b]0;x\x07`, `tx\u009b`, `leased by Ev\x1b]0;x\x07`} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
