// Package sqlpane is the SQL pane (v): every statement the actions ran, as the store recorded
// them, over the other panes.
package sqlpane

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
	"leaselab/engine/words"
	"leaselab/ui/common"
)

// Pane is the SQL pane (v): every statement the actions in the frame ran, as the store
// recorded them (engine.Trace, put in words by words.SQLLines: the UI writes no SQL), newest
// last. It opens on the last action and follows each new one; its own scroll keys, on while it
// is open, move back to earlier actions. It covers the window, all but the status line.
type Pane struct {
	Keys   Keys
	Open   bool
	follow bool // pinned to the end: the last action
	offset int  // the first body line shown, when not following
	w, h   int  // the window
}

// New returns the pane, closed; step is the lab's step key, which its note names.
func New(step key.Binding) Pane { return Pane{Keys: DefaultKeys(step)} }

// SetSize gives the pane the window.
func (p *Pane) SetSize(w, h int) { p.w, p.h = w, h }

// ShortHelp is the pane's keys (help.KeyMap).
func (p Pane) ShortHelp() []key.Binding { return []key.Binding{p.Keys.Toggle, p.Keys.Close} }

// FullHelp is the pane's keys (help.KeyMap).
func (p Pane) FullHelp() [][]key.Binding {
	return [][]key.Binding{{p.Keys.Toggle, p.Keys.Close}, p.Keys.scroll.Bindings()}
}

// Update takes the pane's keys: v opens or closes it, and while it is open its scroll keys
// move it (even when the outbox has nothing to scroll) and esc closes it. ok is false for
// every other key.
func (p Pane) Update(msg tea.Msg, s common.Scene) (_ Pane, ok bool) {
	k, isKey := msg.(tea.KeyMsg)
	switch {
	case !isKey:
		return p, false
	case key.Matches(k, p.Keys.Toggle):
		p.Open, p.follow, p.offset = !p.Open, true, 0 // it opens on the last action
		return p, true
	case !p.Open:
		return p, false
	case key.Matches(k, p.Keys.Close):
		p.Open = false
		return p, true
	}
	n, h := len(p.body(s)), p.BodyHeight()
	if at, ok := p.Keys.scroll.Scroll(k, p.start(n), n, h); ok {
		at = min(max(0, at), max(0, n-h))
		p.offset, p.follow = at, at >= n-h
		return p, true
	}
	return p, false
}

// BodyHeight is how many lines of statements the pane shows: the window less its title, the
// status line and its hint line.
func (p Pane) BodyHeight() int { return max(1, p.h-3) }

// body is the pane's statements: for each action that ran SQL, its event in words (as the
// event log writes it), then each statement, wrapped under it.
func (p Pane) body(s common.Scene) []string {
	f, w := s.Frame, p.w
	if f == nil {
		return nil
	}
	st := s.Styles
	idx := f.WorkerIndex()
	var out []string
	for _, e := range f.Events {
		lines := words.SQLLines(e.Trace)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		// The event in words, on two lines when it is wider than the pane, as the event log does.
		head := common.EventLine(st, e, false, idx)
		if parts := strings.SplitN(ansi.Wrap(head, w, ""), "\n", 2); len(parts) == 2 {
			out = append(out, parts[0], common.Cut(common.Spaces(common.EventIndent)+strings.ReplaceAll(parts[1], "\n", " "), w))
		} else {
			out = append(out, common.Cut(head, w))
		}
		for _, l := range lines {
			style := st.Subtle
			switch {
			case strings.HasPrefix(l, "→ "+engine.EndRollback), strings.Contains(l, "  → 0 rows") && !strings.HasPrefix(l, "SELECT"):
				style = st.Warn
			case strings.HasPrefix(l, "→ "+engine.EndCommit):
				style = st.Playing
			}
			for i, part := range wrapSpaces(l, max(1, w-sqlIndent-2)) {
				lead := common.Spaces(sqlIndent)
				if i > 0 {
					lead = common.Spaces(sqlIndent + 2)
				}
				out = append(out, lead+style.Render(part))
			}
		}
	}
	return out
}

// wrapSpaces wraps s to w cells at spaces only, so that a bound value ('2026-01-15T09:00:00.500Z')
// is never split at its hyphens; a word wider than w is cut into pieces of w. (Statements are
// plain text: one rune is one cell.)
func wrapSpaces(s string, w int) []string {
	var lines []string
	var cur []rune
	for _, word := range strings.Split(s, " ") {
		rw := []rune(word)
		switch {
		case len(cur) == 0 && len(rw) == 0:
			continue // a line never starts with a space
		case len(cur) == 0:
			cur = rw
		case len(cur)+1+len(rw) <= w:
			cur = append(append(cur, ' '), rw...)
		default:
			lines = append(lines, strings.TrimRight(string(cur), " "))
			cur = rw
		}
		for len(cur) > w {
			lines, cur = append(lines, string(cur[:w])), cur[w:]
		}
	}
	if len(cur) > 0 {
		lines = append(lines, string(cur))
	}
	return lines
}

// sqlIndent is where a statement starts under its event.
const sqlIndent = 4

// start is the first body line shown of n: the end when following, else offset, within bounds.
func (p Pane) start(n int) int {
	h := p.BodyHeight()
	if p.follow || p.offset > n-h {
		return max(0, n-h)
	}
	return max(0, p.offset)
}

// View is the pane's title and statements, bodyHeight()+1 lines.
func (p Pane) View(s common.Scene) string {
	w, st := p.w, s.Styles
	lines := p.body(s)
	n, bh := len(lines), p.BodyHeight()
	at := p.start(n)
	title := "SQL: each statement as the database ran it, newest last"
	out := []string{st.Section.Render(common.Rule(title, w))}
	if n == 0 {
		out = append(out, st.Caption.Render(common.Cut("No action has run SQL yet: step a worker ("+common.KeyName(p.Keys.step)+").", w)))
	}
	out = append(out, common.Box(lines[at:min(n, at+bh)], w, bh-len(out)+1)...)
	return strings.Join(out, "\n")
}

// Hint is the pane's last line: where it is, and which keys move and close it.
func (p Pane) Hint(s common.Scene) string {
	n, bh := len(p.body(s)), p.BodyHeight()
	at := p.start(n)
	where := "the last action"
	if n > bh {
		where = fmt.Sprintf("lines %d–%d of %d", at+1, min(n, at+bh), n)
		if !p.follow {
			where += ", scrolled back"
		}
	}
	hint := fmt.Sprintf("%s · %s: earlier actions · %s %s: close",
		where, common.KeyNames(p.Keys.scroll.Bindings()...), common.KeyName(p.Keys.Toggle), common.KeyName(p.Keys.Close))
	return s.Styles.Subtle.Render(common.Cut(hint, p.w))
}
