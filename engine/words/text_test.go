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
