package explore

import (
	"fmt"
	"io"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
)

// WriteText writes what the search found: the shortest schedule and the broken checks, or what
// it proved and the figures, and the line of a bound that cut it.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	if v := r.Violation; v != nil {
		fmt.Fprintf(&b, "explore %s: a shortest schedule that breaks %s, %d %s:\n", r.Scenario, failedList(v), len(v.Schedule), words.Plural(len(v.Schedule), "move"))
		for i, t := range v.Schedule {
			fmt.Fprintf(&b, "  %2d  %s\n", i+1, t)
		}
		for _, c := range v.Failed {
			fmt.Fprintf(&b, "check %s failed: %s: %s\n", c.ID, c.Name, c.Detail)
		}
		for _, l := range v.Last {
			fmt.Fprintf(&b, "its last move: %s\n", l)
		}
		fmt.Fprintf(&b, "searched: %s\n", r.figures())
	} else {
		r.writeProof(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeProof is the no-violation case: what was proved, and what cut it short.
func (r *Result) writeProof(b *strings.Builder) {
	complete := r.Depth
	switch r.Cut {
	case "max-states":
		fmt.Fprintf(b, "--max-states %s cut the search: %s new states were checked but not explored further\n",
			words.Thousands(r.Bounds.MaxStates), words.Thousands(r.Unstored))
		complete = min(complete, r.FirstUnstored)
	case "time-limit":
		fmt.Fprintf(b, "--time-limit %s cut the search during depth %d\n", r.Bounds.TimeLimit, r.Depth+1)
	case "interrupted":
		fmt.Fprintf(b, "interrupted during depth %d: what was explored so far\n", r.Depth+1)
	}
	what := "a safety check"
	if len(r.Checks) == 1 {
		what = r.Checks[0]
	}
	fmt.Fprintf(b, "no schedule of depth ≤ %d with ≤ %d %s and ≤ %d clock %s", complete, r.Bounds.Crashes,
		words.Plural(r.Bounds.Crashes, "crash"), r.Bounds.ClockMoves, words.Plural(r.Bounds.ClockMoves, "move"))
	if r.Bounds.Pauses > 0 {
		fmt.Fprintf(b, " and ≤ %d %s", r.Bounds.Pauses, words.Plural(r.Bounds.Pauses, "pause"))
	}
	fmt.Fprintf(b, " breaks %s: %s\n", what, r.figures())
	if r.Exhausted && r.Cut == "" {
		fmt.Fprintf(b, "every state within those bounds was explored by depth %d: no move was left\n", r.Depth)
	}
	if len(r.Checks) > 1 {
		fmt.Fprintf(b, "checked after every move: %s\n", strings.Join(r.Checks, ", "))
	}
}

// figures are the counts: "48,211 states (9,870 distinct), 6.2 s".
func (r *Result) figures() string {
	s := fmt.Sprintf("%s states (%s distinct, %s seen before), %s", words.Thousands(r.States), words.Thousands(r.Distinct),
		words.Thousands(r.Pruned), Seconds(r.Elapsed))
	if r.Elapsed > 0 {
		s += fmt.Sprintf(", %s transitions/s", words.Thousands(int(float64(r.States)/r.Elapsed.Seconds())))
	}
	return s
}

// Progress is the line a running search prints now and then.
func (st Stats) Progress() string {
	return fmt.Sprintf("explore: depth %d done, %s states (%s distinct), %s waiting, %s", st.Depth, words.Thousands(st.States),
		words.Thousands(st.Distinct), words.Thousands(st.Frontier), Seconds(st.Elapsed))
}

// failedIDs are the ids of the checks the violation breaks.
func failedIDs(v *Violation) []string {
	var ids []string
	for _, c := range v.Failed {
		ids = append(ids, c.ID)
	}
	return ids
}

func failedList(v *Violation) string { return strings.Join(failedIDs(v), ", ") }

// Seconds writes d as seconds with one decimal: "6.2 s".
func Seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// JSON is the result for --json.
type JSON struct {
	Scenario  string           `json:"scenario"`
	Checks    []string         `json:"checks"`
	Bounds    JSONBounds       `json:"bounds"`
	Restore   string           `json:"restore"`
	Found     bool             `json:"found"`
	Schedule  []string         `json:"schedule,omitempty"`
	Failed    []engine.Check   `json:"failed,omitempty"`
	Proved    *JSONProof       `json:"proved,omitempty"`
	Cut       string           `json:"cut,omitempty"`
	Stats     JSONStats        `json:"stats"`
	TimeSpent map[string]int64 `json:"time_ms"`
}

// JSONBounds are the bounds in --json.
type JSONBounds struct {
	Depth      int    `json:"depth"`
	Crashes    int    `json:"crashes"`
	ClockMoves int    `json:"clock_moves"`
	Pauses     int    `json:"pauses"`
	MaxStates  int    `json:"max_states"`
	TimeLimit  string `json:"time_limit"`
}

// JSONProof is what a search without a violation proved.
type JSONProof struct {
	Depth     int  `json:"depth"`
	Exhausted bool `json:"exhausted"`
}

// JSONStats are the figures in --json.
type JSONStats struct {
	States      int     `json:"states"`
	Distinct    int     `json:"distinct"`
	Pruned      int     `json:"seen_before"`
	Unstored    int     `json:"unstored"`
	Depth       int     `json:"depth_done"`
	Restores    int     `json:"restores"`
	Replayed    int     `json:"replayed_moves"`
	ElapsedMS   int64   `json:"elapsed_ms"`
	Transitions float64 `json:"transitions_per_s"`
}

// JSON returns the result as --json prints it.
func (r *Result) JSON() JSON {
	j := JSON{Scenario: r.Scenario, Checks: r.Checks, Restore: string(r.Restore), Cut: r.Cut,
		Bounds: JSONBounds{Depth: r.Bounds.Depth, Crashes: r.Bounds.Crashes, ClockMoves: r.Bounds.ClockMoves,
			Pauses: r.Bounds.Pauses, MaxStates: r.Bounds.MaxStates, TimeLimit: r.Bounds.TimeLimit.String()},
		Stats: JSONStats{States: r.States, Distinct: r.Distinct, Pruned: r.Pruned, Unstored: r.Unstored, Depth: r.Depth,
			Restores: r.Restores, Replayed: r.Replayed, ElapsedMS: r.Elapsed.Milliseconds()},
		TimeSpent: map[string]int64{"restore": r.RestoreTime.Milliseconds(), "replay": r.ReplayTime.Milliseconds(),
			"moves": r.MoveTime.Milliseconds(), "checks": r.CheckTime.Milliseconds(), "copies": r.CopyTime.Milliseconds()}}
	if r.Elapsed > 0 {
		j.Stats.Transitions = float64(r.States) / r.Elapsed.Seconds()
	}
	if v := r.Violation; v != nil {
		j.Found, j.Failed = true, v.Failed
		for _, t := range v.Schedule {
			j.Schedule = append(j.Schedule, t.String())
		}
	} else {
		d := r.Depth
		if r.Cut == "max-states" {
			d = min(d, r.FirstUnstored)
		}
		j.Proved = &JSONProof{Depth: d, Exhausted: r.Exhausted && r.Cut == ""}
	}
	return j
}
