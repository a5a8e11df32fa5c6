// Package history is the lab's history as the screen keeps it: the moves recorded on the
// session (engine.History, which the lab's runner records and replays), the screen's copy of
// them (Timeline), where the history keys go (b, [ and ]), and the timeline line above the
// status note.
package history

import (
	"context"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"leaselab/engine"
	"leaselab/ui/common"
)

// Timeline is a copy of the history for the screen (the engine's may change under a command).
type Timeline struct {
	Entries []engine.Entry
	Pos     int
	Valid   bool
}

// Of is the timeline of h as it stands; the zero Timeline without one.
func Of(h *engine.History) Timeline {
	if h == nil {
		return Timeline{}
	}
	return Timeline{Entries: h.Entries(), Pos: h.Pos(), Valid: true}
}

// Track is the lab's history of the session open: the engine's record of the moves, the
// screen's copy of it, and the steps that acted (the count of a run without a history).
type Track struct {
	H     *engine.History
	Line  Timeline
	steps int
}

// Open starts the history of a freshly opened session s; reopen opens the same scenario again
// on a fresh database, for a rebuild. Without a session there is none.
func Open(s *engine.Session, reopen func(context.Context) (*engine.Session, error)) Track {
	if s == nil {
		return Track{}
	}
	h := engine.NewHistory(s, reopen)
	return Track{H: h, Line: Of(h)}
}

// Took takes what a command did to the history: the timeline after it (when valid), whether it
// was a move in the history (b, [, ]: the step count is the history's again), and whether it was
// a step that acted.
func (t Track) Took(line Timeline, moved, stepped bool) Track {
	if line.Valid {
		t.Line = line
		if moved {
			t.steps = line.steps()
		}
	}
	if stepped {
		t.steps++
	}
	return t
}

// StepCount is the lab's one count of steps: the history's position, the step the timeline
// shows ("history step 7 of 12"), so that the header and the history agree after e, a toggle
// or a step back; a run without a history counts the steps that acted.
func (t Track) StepCount() int {
	if t.Line.Valid {
		return t.Line.Pos
	}
	return t.steps
}

// Acted is how many steps acted since the scenario opened (after a move in the history, how
// many of the recorded moves up to its position did).
func (t Track) Acted() int { return t.steps }

// steps is how many of the recorded moves up to the position were steps that acted: the
// header's step count after a rebuild.
func (t Timeline) steps() int {
	n := 0
	for _, e := range t.Entries[:t.Pos] {
		if e.Acted && e.Command != nil && e.Command.Info().Step {
			n++
		}
	}
	return n
}

// Back is the position b goes to from the current one: one move back.
func (t Timeline) Back() (int, bool) { return t.Pos - 1, t.Pos > 0 }

// PrevMark is the position [ goes to: just after the previous marked move (a crash, a reclaim,
// a rejected finalize, a free run), so that the screen shows that moment; at the start, the start.
func (t Timeline) PrevMark() (int, bool) {
	limit := t.Pos // no position after a move that cannot be replayed can be rebuilt
	for i, e := range t.Entries[:t.Pos] {
		if !e.Exact {
			limit = i
			break
		}
	}
	for i := t.Pos - 2; i >= 0; i-- {
		if t.Entries[i].Mark != '·' && i+1 <= limit {
			return i + 1, true
		}
	}
	return 0, t.Pos > 0
}

// NextMark is the position ] goes to: just after the next marked move; at the end, the newest.
func (t Timeline) NextMark() (int, bool) {
	for i := t.Pos; i < len(t.Entries); i++ {
		if t.Entries[i].Mark != '·' {
			return i + 1, true
		}
	}
	return len(t.Entries), t.Pos < len(t.Entries)
}

// NoTarget says why a history key has nowhere to go: forward (]) at the newest step, or back
// at the start; step is the key that steps on.
func (t Timeline) NoTarget(forward bool, step key.Binding) string {
	if forward {
		return fmt.Sprintf("at the newest step (%d): nothing recorded after it; %s steps on", t.Pos, common.KeyName(step))
	}
	return fmt.Sprintf("at the start: nothing to go back to; %s steps", common.KeyName(step))
}

// The timeline is one line above the status note, once the run has a history: where the
// database stands among the recorded moves, one glyph a move, and what the glyphs mean.

// markWords are the timeline's glyphs in words, in the order the legend gives them.
var markWords = []struct {
	mark rune
	word string
}{{'x', "crash"}, {'r', "reclaim"}, {'!', "rejected finalize"}, {'*', "ownership violation"}, {'~', "ran free (no going back past it)"}}

// Lines is how many lines the timeline takes: 1 once something was recorded.
func (t Timeline) Lines() int {
	if t.Valid && len(t.Entries) > 0 {
		return 1
	}
	return 0
}

// View is the timeline in at most w cells: "history step 7 of 12 ··x··r·|··!·· …", with the
// score of the questions answered (score, "" before the first) and the keys that move in it
// (keys; "" while they do not act).
func (t Timeline) View(w int, score, keys string) string {
	head := fmt.Sprintf("history step %d of %d ", t.Pos, len(t.Entries))
	if t.Pos < len(t.Entries) {
		head = fmt.Sprintf("history step %d of %d (in the past) ", t.Pos, len(t.Entries))
	}
	if score != "" {
		head += "· " + score + " "
	}
	glyphs := make([]rune, 0, len(t.Entries)+1)
	seen := map[rune]bool{}
	for i, e := range t.Entries {
		if i == t.Pos {
			glyphs = append(glyphs, '|')
		}
		glyphs = append(glyphs, e.Mark)
		seen[e.Mark] = true
	}
	if t.Pos == len(t.Entries) {
		glyphs = append(glyphs, '|')
	}
	var legend []string
	for _, mw := range markWords {
		if seen[mw.mark] {
			legend = append(legend, string(mw.mark)+" "+mw.word)
		}
	}
	tail := keys
	if len(legend) > 0 {
		tail = "  " + strings.Join(legend, " · ") + keys
	}
	room := w - common.Width(head) - common.Width(tail)
	if room < 12 {
		tail, room = keys, w-common.Width(head)-common.Width(keys)
	}
	strip := window(glyphs, t.Pos, max(room, 8))
	return common.Cut(head+strip+tail, w)
}

// window is up to n glyphs of g around index at (the cursor), with … where it cuts.
func window(g []rune, at, n int) string {
	if len(g) <= n {
		return string(g)
	}
	lo := max(0, min(at-n/2, len(g)-n))
	hi := lo + n
	s := []rune(string(g[lo:hi]))
	if lo > 0 {
		s[0] = '…'
	}
	if hi < len(g) {
		s[len(s)-1] = '…'
	}
	return string(s)
}
