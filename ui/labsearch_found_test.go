package ui

import (
	"strings"
	"testing"
)

// presses is n presses of the space bar, as a search line writes them.
func presses(n int) string { return strings.TrimSpace(strings.Repeat("space ", n)) }

// What the lab's own search found (issue 28), each as the line of moves that found it, replayed
// with every check of the search after every move, at 80×24 and 120×40.
func TestLabSearchFound(t *testing.T) {
	for _, tc := range []struct{ why, line string }{
		// A question without its answers: many-workers' PREDICT was cut at 80×24, none of its
		// answers on screen.
		{"a question and all its answers at 80×24", "many-workers: space"},
		// One stray space replaced the question and its answers with "! answer first…"; b
		// answered B though the screen said "b back", a answered A though it said "a atomic".
		{"a stray key keeps the question; b and a wait", "stale-owner: " + presses(7) + " space b a B"},
		// An answer's explanation ended in "…".
		{"an answer's why whole", "after: " + presses(3) + " A"},
		// before's verdict lost its ❌ at 80×24.
		{"the verdict's mark", "before: e"},
		// Workers dropped off the verdict screen without a word (1 of 8 shown at 80×24,
		// Worker-H missing at 120×40).
		{"+N more workers", "many-workers: e"},
		// ? listed neither A–D, { } nor V, and its quit line was cut while a question was open.
		{"? whole, with a question open", "clock-skew: " + presses(5) + " ?"},
		{"? names V, { } and A–D", "dead-letter: ?"},
		// "action not possible now", the engine's sentinel, reached the status line, and the
		// events' "script line 19 skipped: …" once a crash took a worker off the script.
		{"a refusal in words", "playground: r"},
		{"a skipped script line in words", "naive-claim: x e"},
		// A toggle's note cut to two lines at 80×24 (what it says of a run under way lost).
		{"a toggle's note whole", "after: space l"},
		// Rows left out with no word of them once the status and the verdict took the lines.
		{"rows left out are counted", "retry-backoff: x m space space A f e b"},
		// A lesson run with a toggle its expectations do not name, from the start: "VERDICT:
		// PASS ✅" beside "✗ not as expected with backoff=on" (dead-letter on).
		{"expectations a setting does not foresee are not judged", "retry-backoff: m e"},
		// e's status note repeated the stall's cause the verdict box gives, and was cut at 80×24.
		{"e's note whole after a stall", "dead-letter: + space + space A space space m f X space e"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			replaySearchLine(t, tc.line)
		})
	}
}
