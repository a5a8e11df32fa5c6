package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// `leaselab run rescuer-race | clock-skew` teach their failure with the fix off and the fix with
// it on, exit 0 both ways, and --json counts the rescuer's rescues and the clocks' reclaims.
func TestRescueAndSkewLessonsRun(t *testing.T) {
	for _, c := range []struct {
		args []string
		key  string // the --json section
		want map[string]float64
	}{
		{[]string{"rescuer-race", "--guarded-rescue=false"}, "rescuer", map[string]float64{"rescues": 1, "rescued_finished": 1, "rescues_refused": 0}},
		{[]string{"rescuer-race", "--guarded-rescue=true"}, "rescuer", map[string]float64{"rescues": 0, "rescued_finished": 0, "rescues_refused": 1}},
		{[]string{"clock-skew"}, "clocks", map[string]float64{"early_reclaims": 1, "fenced_calls": 0}},
		{[]string{"clock-skew", "--provider-fencing"}, "clocks", map[string]float64{"early_reclaims": 1, "fenced_calls": 1}},
		{[]string{"clock-skew", "--db-clock"}, "clocks", map[string]float64{"early_reclaims": 0, "fenced_calls": 0}},
		{[]string{"after", "--skew", "B=+400ms", "--workers", "2"}, "clocks", map[string]float64{"early_reclaims": 0}},
	} {
		args := append([]string{"run", "--json", "--report-dir", ""}, c.args...)
		code, out, errOut := cli(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
			continue
		}
		var sum map[string]any
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		sec, _ := sum[c.key].(map[string]any)
		for k, v := range c.want {
			if sec[k] != v {
				t.Errorf("%v: %s.%s = %v, want %v", c.args, c.key, k, sec[k], v)
			}
		}
	}
}

// --skew is refused, exit 2, for a worker the run does not have and an offset without a sign.
func TestSkewFlagRefused(t *testing.T) {
	for _, args := range [][]string{{"--skew", "C=+1s"}, {"--skew", "B=1s"}, {"--skew", "B"}} {
		code, _, errOut := cli(t, append([]string{"run", "after", "--report-dir", ""}, args...)...)
		if code != 2 || !strings.Contains(errOut, "skew") {
			t.Errorf("%v: exit %d, %q; want 2 naming the skew", args, code, errOut)
		}
	}
}

// --sql shows the rescuer's statements under its lines: its read, and its UPDATE guarded or not.
func TestRescuerSQL(t *testing.T) {
	for on, want := range map[string]string{
		"false": "WHERE Id = 1  → 1 row  (unguarded rescue: the row by Id alone)",
		"true":  "AND LockedBy = 'Worker-A' AND LeaseVersion = 1  → 0 rows",
	} {
		code, out, errOut := cli(t, "run", "rescuer-race", "--sql", "--report-dir", "", "--guarded-rescue="+on)
		if code != 0 || !strings.Contains(out, "(rescuer: read the leases that have ended)") || !strings.Contains(out, want) {
			t.Errorf("--guarded-rescue=%s --sql: exit %d, want %q:\n%s%s", on, code, want, out, errOut)
		}
	}
}
