package scenario_test

import (
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/engine/scenario"
)

func TestParseProviderFailures(t *testing.T) {
	sc, err := scenario.Parse("f.scenario", []byte(`name: f
provider-error: PAY-004 always
provider-error: PAY-002 times-out 2
provider-error: PAY-005 permanent
outage: 09:00:00.100Z 300ms
fail-rate: 0.2
backoff: on
backoff-policy: fixed
backoff-base: 50ms
backoff-cap: 1s
dead-letter: on
max-attempts: 4
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.Fault{{Key: "PAY-004", Line: 2}, {Key: "PAY-002", Times: 2, Line: 3}, {Key: "PAY-005", Permanent: true, Line: 4}}
	if len(sc.Faults) != 3 || sc.Faults[0] != want[0] || sc.Faults[1] != want[1] || sc.Faults[2] != want[2] {
		t.Fatalf("faults %+v, want %+v", sc.Faults, want)
	}
	if len(sc.Outages) != 1 || !sc.Outages[0].From.Equal(engine.Epoch.Add(100*time.Millisecond)) || sc.Outages[0].For != 300*time.Millisecond {
		t.Fatalf("outages %+v", sc.Outages)
	}
	s := sc.Settings
	if sc.FailRate != 0.2 || !s.Backoff || s.BackoffPolicy != engine.BackoffFixed || s.BackoffBase != 50*time.Millisecond ||
		s.BackoffCap != time.Second || !s.DeadLetter || s.MaxAttempts != 4 {
		t.Fatalf("settings %+v, fail-rate %v", s, sc.FailRate)
	}
}

// Bad input names its file and line, as every other directive's does.
func TestParseProviderFailuresRefusesBadInput(t *testing.T) {
	for _, c := range []struct{ line, msg string }{
		{"provider-error: PAY-004", "want KEY always, KEY times-out N or KEY permanent"},
		{"provider-error: PAY-004 sometimes", "want KEY always"},
		{"provider-error: PAY-004 times-out", "want KEY always"},
		{"provider-error: PAY-004 times-out 0", "times-out wants a whole number"},
		{"outage: 09:00:00.100Z", "want a start time and a length"},
		{"outage: 9am 300ms", "bad outage start"},
		{"outage: 09:00:00.100Z 0s", "want at least 1ms"},
		{"fail-rate: 1.5", "want a chance from 0 to 1"},
		{"backoff-policy: random", "want fixed or exponential"},
		{"backoff-base: 0s", "want at least 1ms"},
		{"max-attempts: 0", "want a whole number from 1 to 1000"},
	} {
		_, err := scenario.Parse("bad.scenario", []byte("name: bad\n"+c.line+"\n"))
		if err == nil || !strings.Contains(err.Error(), "bad.scenario:2") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v, want bad.scenario:2 and %q", c.line, err, c.msg)
		}
	}
	_, err := scenario.Parse("dup.scenario", []byte("name: dup\nprovider-error: PAY-001 always\nprovider-error: PAY-001 permanent\n"))
	if err == nil || !strings.Contains(err.Error(), "dup.scenario:3") || !strings.Contains(err.Error(), "first at line 2") {
		t.Errorf("duplicate provider-error: %v", err)
	}
}
