package explore

import (
	"encoding/json"
	"strings"
	"testing"

	"leaselab/engine"
)

// TestWitnessAndPointOfNoReturn: with the ownership check off, the violation's witness names the
// check, the message, the stale finalize and the reclaim it failed against, from the run's own
// events; the shares run from the start to 1 at the last move, the point of no return is a move
// of the schedule, and --json carries them with figures that add up.
func TestWitnessAndPointOfNoReturn(t *testing.T) {
	sc := lesson(t, "playground", map[string]bool{engine.ToggleOwnershipCheck: false})
	res := search(t, sc, DefaultBounds(), RestoreRows)
	v := res.Violation
	if v == nil || v.Witness == nil {
		t.Fatalf("violation %+v", v)
	}
	want := "no-violations broke at move 5: Worker-A finalized PAY-001 under lease v1 after Worker-B claimed it as v2 at move 4; Worker-A's finalize checked nothing"
	if v.Witness.Text != want || v.Witness.Key != "PAY-001" || v.Witness.Before != 4 || v.Witness.Last != 5 {
		t.Errorf("witness %+v\nwant %q", v.Witness, want)
	}
	n := len(v.Schedule)
	if len(v.Shares) != n+1 || v.Shares[n] != 1 || v.NoReturn < 1 || v.NoReturn > n || v.Shares[0] <= 0 || v.Shares[0] >= 1 {
		t.Errorf("shares %v, point of no return %d, for %d moves", v.Shares, v.NoReturn, n)
	}
	var text strings.Builder
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"why: " + want, "point of no return: move ", " !"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("the text has no %q:\n%s", s, text.String())
		}
	}
	data, err := json.Marshal(res.JSON())
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Witness struct {
			Text string `json:"text"`
		} `json:"witness"`
		PointOfNoReturn int       `json:"point_of_no_return"`
		Shares          []float64 `json:"continuations_failing_share"`
		Stats           struct {
			States, Distinct, SeenBefore, Pruned, Unstored int
			FirstViolationMS                               *int64    `json:"first_violation_ms"`
			Share                                          []float64 `json:"violating_share_by_depth"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	if j.Witness.Text != want || j.PointOfNoReturn != v.NoReturn || len(j.Shares) != n+1 || j.Stats.FirstViolationMS == nil ||
		len(j.Stats.Share) != n || j.Stats.Share[n-1] <= 0 || j.Stats.Share[0] != 0 {
		t.Errorf("--json: %s", data)
	}
	if res.States != res.Distinct+res.SeenBefore+res.Pruned+res.Unstored {
		t.Errorf("%d states ≠ %d distinct + %d seen before + %d pruned + %d unstored", res.States, res.Distinct, res.SeenBefore, res.Pruned, res.Unstored)
	}
}
