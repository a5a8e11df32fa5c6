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
			mark := " "
			if v.Shares != nil && i+1 == v.NoReturn {
				mark = "!"
			}
			fmt.Fprintf(&b, " %s%2d  %s\n", mark, i+1, t)
		}
		for _, c := range v.Failed {
			fmt.Fprintf(&b, "check %s failed: %s: %s\n", c.ID, c.Name, c.Detail)
		}
		for _, l := range v.Last {
			fmt.Fprintf(&b, "its last move: %s\n", l)
		}
		if v.Witness != nil {
			fmt.Fprintf(&b, "why: %s\n", v.Witness.Text)
		}
		if v.Shares != nil {
			fmt.Fprintf(&b, "share of continuations that still fail, after each move: %s\n", shareLine(v))
			fmt.Fprintf(&b, "point of no return: move %d (%s): from there every continuation fails\n", v.NoReturn, v.Schedule[v.NoReturn-1])
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
	fmt.Fprintf(b, "%s\n", r.reductions())
	if r.Exhausted && r.Cut == "" {
		fmt.Fprintf(b, "every state within those bounds was explored by depth %d: no move was left\n", r.Depth)
	}
	if len(r.Checks) > 1 {
		fmt.Fprintf(b, "checked after every move: %s\n", strings.Join(r.Checks, ", "))
	}
}

// figures are the counts, which add up: "4,192 states (3,025 distinct, 1,167 seen before),
// 4,191 moves, 3.5 s, 1,212 moves/s"; with the reductions on, the moves they left out
// ("pruned") are states too, and the symmetric ones are among those seen before.
func (r *Result) figures() string {
	s := fmt.Sprintf("%s states (%s distinct, %s seen before", words.Thousands(r.States), words.Thousands(r.Distinct),
		words.Thousands(r.SeenBefore))
	if r.Pruned > 0 {
		s += fmt.Sprintf(", %s pruned", words.Thousands(r.Pruned))
	}
	if r.Unstored > 0 {
		s += fmt.Sprintf(", %s not stored", words.Thousands(r.Unstored))
	}
	s += fmt.Sprintf("), %s %s, %s", words.Thousands(r.Moves), words.Plural(r.Moves, "move"), Seconds(r.Elapsed))
	if r.Elapsed > 0 {
		s += fmt.Sprintf(", %s moves/s", words.Thousands(int(float64(r.Moves)/r.Elapsed.Seconds())))
	}
	return s
}

// reductions says which reductions the search used, for the proof's last line.
func (r *Result) reductions() string {
	switch {
	case r.Symmetry && r.SleepSets:
		return "reduced by symmetry (interchangeable workers are one) and sleep sets (one order of moves that commute)"
	case r.Symmetry:
		return "reduced by symmetry (interchangeable workers are one)"
	case r.SleepSets:
		return "reduced by sleep sets (one order of moves that commute)"
	}
	return "not reduced (--no-reduce): every order of every move"
}

// Progress is the line a running search prints now and then.
func (st Stats) Progress() string {
	return fmt.Sprintf("explore: depth %d done, %s states (%s distinct), %s waiting, %s", st.Depth, words.Thousands(st.States),
		words.Thousands(st.Distinct), words.Thousands(st.Frontier), Seconds(st.Elapsed))
}

// shareLine is the shares after each prefix: "0: 4%, 1: 9%, … 5: 100% !, 6: 100%".
func shareLine(v *Violation) string {
	var parts []string
	for k, sh := range v.Shares {
		p := fmt.Sprintf("%d: %s", k, percent(sh))
		if k == v.NoReturn {
			p += " !"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// percent writes a share as a whole percentage, never rounding a share below 1 up to 100%.
func percent(f float64) string {
	p := int(f*100 + 0.5)
	if f < 1 && p == 100 {
		p = 99
	}
	if f > 0 && p == 0 {
		return "<1%"
	}
	return fmt.Sprintf("%d%%", p)
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
	Scenario string         `json:"scenario"`
	Checks   []string       `json:"checks"`
	Bounds   JSONBounds     `json:"bounds"`
	Restore  string         `json:"restore"`
	Found    bool           `json:"found"`
	Schedule []string       `json:"schedule,omitempty"`
	Failed   []engine.Check `json:"failed,omitempty"`
	Witness  *JSONWitness   `json:"witness,omitempty"`
	// Shares are, after each prefix of the schedule (0: none of it), the share of its
	// continuations that still fail; PointOfNoReturn the move after which all do.
	Shares          []float64        `json:"continuations_failing_share,omitempty"`
	PointOfNoReturn int              `json:"point_of_no_return,omitempty"`
	Proved          *JSONProof       `json:"proved,omitempty"`
	Cut             string           `json:"cut,omitempty"`
	Stats           JSONStats        `json:"stats"`
	Reductions      JSONReductions   `json:"reductions"`
	TimeSpent       map[string]int64 `json:"time_ms"`
}

// JSONWitness is the violation's witness in --json.
type JSONWitness struct {
	Check  string `json:"check"`
	Key    string `json:"message,omitempty"`
	Last   int    `json:"last_move"`
	Before int    `json:"before_move,omitempty"`
	Text   string `json:"text"`
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

// JSONStats are the figures in --json: states = distinct + seen_before + pruned + unstored.
type JSONStats struct {
	States     int   `json:"states"`
	Moves      int   `json:"moves"`
	Distinct   int   `json:"distinct"`
	SeenBefore int   `json:"seen_before"`
	Pruned     int   `json:"pruned"`
	Unstored   int   `json:"unstored"`
	Depth      int   `json:"depth_done"`
	Restores   int   `json:"restores"`
	Replayed   int   `json:"replayed_moves"`
	ElapsedMS  int64 `json:"elapsed_ms"`
	// FirstViolationMS is when the first violation was found (null: none).
	FirstViolationMS *int64      `json:"first_violation_ms"`
	Transitions      float64     `json:"transitions_per_s"`
	StatesPerS       float64     `json:"states_per_s"`
	ByDepth          []JSONDepth `json:"by_depth"`
	// ViolatingShareByDepth is, per depth from 1, the share of the states reached there that
	// broke a check.
	ViolatingShareByDepth []float64 `json:"violating_share_by_depth"`
}

// JSONDepth is one depth's figures.
type JSONDepth struct {
	Depth     int `json:"depth"`
	States    int `json:"states"`
	Violating int `json:"violating"`
}

// JSONReductions say which reductions the search used.
type JSONReductions struct {
	Symmetry  bool `json:"symmetry"`
	SleepSets bool `json:"sleep_sets"`
}

// JSON returns the result as --json prints it.
func (r *Result) JSON() JSON {
	j := JSON{Scenario: r.Scenario, Checks: r.Checks, Restore: string(r.Restore), Cut: r.Cut,
		Bounds: JSONBounds{Depth: r.Bounds.Depth, Crashes: r.Bounds.Crashes, ClockMoves: r.Bounds.ClockMoves,
			Pauses: r.Bounds.Pauses, MaxStates: r.Bounds.MaxStates, TimeLimit: r.Bounds.TimeLimit.String()},
		Stats: JSONStats{States: r.States, Moves: r.Moves, Distinct: r.Distinct, SeenBefore: r.SeenBefore, Pruned: r.Pruned,
			Unstored: r.Unstored, Depth: r.Depth, Restores: r.Restores, Replayed: r.Replayed, ElapsedMS: r.Elapsed.Milliseconds()},
		Reductions: JSONReductions{Symmetry: r.Symmetry, SleepSets: r.SleepSets},
		TimeSpent: map[string]int64{"restore": r.RestoreTime.Milliseconds(), "replay": r.ReplayTime.Milliseconds(),
			"moves": r.MoveTime.Milliseconds(), "checks": r.CheckTime.Milliseconds(), "keys": r.KeyTime.Milliseconds(), "copies": r.CopyTime.Milliseconds()}}
	if r.Elapsed > 0 {
		j.Stats.Transitions = float64(r.Moves) / r.Elapsed.Seconds()
		j.Stats.StatesPerS = float64(r.States) / r.Elapsed.Seconds()
	}
	if r.Violation != nil {
		ms := r.FirstViolation.Milliseconds()
		j.Stats.FirstViolationMS = &ms
	}
	for d, c := range r.ByDepth {
		j.Stats.ByDepth = append(j.Stats.ByDepth, JSONDepth{Depth: d, States: c.States, Violating: c.Violating})
		if d > 0 {
			share := 0.0
			if c.States > 0 {
				share = float64(c.Violating) / float64(c.States)
			}
			j.Stats.ViolatingShareByDepth = append(j.Stats.ViolatingShareByDepth, share)
		}
	}
	if v := r.Violation; v != nil {
		j.Found, j.Failed = true, v.Failed
		if w := v.Witness; w != nil {
			j.Witness = &JSONWitness{Check: w.Check, Key: w.Key, Last: w.Last, Before: w.Before, Text: w.Text}
		}
		j.Shares, j.PointOfNoReturn = v.Shares, v.NoReturn
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
