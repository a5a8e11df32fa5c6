package ui

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

// sqlPane is the SQL pane (v): every statement the actions in the frame ran, as the store
// recorded them (engine.Trace, put in words by words.SQLLines: the UI writes no SQL), newest
// last. It opens on the last action and follows each new one; its own scroll keys, on while it
// is open, move back to earlier actions. It covers the window, all but the status line.
type sqlPane struct {
	keys   sqlKeys
	open   bool
	follow bool // pinned to the end: the last action
	offset int  // the first body line shown, when not following
	w, h   int  // the window
}

// newSQLPane returns the pane, closed.
func newSQLPane() sqlPane { return sqlPane{keys: defaultSQLKeys()} }

// SetSize gives the pane the window.
func (p *sqlPane) SetSize(w, h int) { p.w, p.h = w, h }

// ShortHelp is the pane's keys (help.KeyMap).
func (p sqlPane) ShortHelp() []key.Binding { return []key.Binding{p.keys.Toggle, p.keys.Close} }

// FullHelp is the pane's keys (help.KeyMap).
func (p sqlPane) FullHelp() [][]key.Binding {
	return [][]key.Binding{{p.keys.Toggle, p.keys.Close}, p.keys.scroll.bindings()}
}

// Update takes the pane's keys: v opens or closes it, and while it is open its scroll keys
// move it (even when the outbox has nothing to scroll) and esc closes it. ok is false for
// every other key.
func (p sqlPane) Update(msg tea.Msg, s common.Scene) (_ sqlPane, ok bool) {
	k, isKey := msg.(tea.KeyMsg)
	switch {
	case !isKey:
		return p, false
	case key.Matches(k, p.keys.Toggle):
		p.open, p.follow, p.offset = !p.open, true, 0 // it opens on the last action
		return p, true
	case !p.open:
		return p, false
	case key.Matches(k, p.keys.Close):
		p.open = false
		return p, true
	}
	if act, on := p.keys.scroll.match(k); on {
		p.scrollBy(act, s)
		return p, true
	}
	return p, false
}

// bodyHeight is how many lines of statements the pane shows: the window less its title, the
// status line and its hint line.
func (p sqlPane) bodyHeight() int { return max(1, p.h-3) }

// body is the pane's statements: for each action that ran SQL, its event in words (as the
// event log writes it), then each statement, wrapped under it.
func (p sqlPane) body(s common.Scene) []string {
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
		head := eventLine(st, e, false, idx)
		if parts := strings.SplitN(ansi.Wrap(head, w, ""), "\n", 2); len(parts) == 2 {
			out = append(out, parts[0], common.Cut(common.Spaces(eventIndent)+strings.ReplaceAll(parts[1], "\n", " "), w))
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
func (p sqlPane) start(n int) int {
	h := p.bodyHeight()
	if p.follow || p.offset > n-h {
		return max(0, n-h)
	}
	return max(0, p.offset)
}

// scrollBy moves the pane by a scroll action; reaching the end follows again.
func (p *sqlPane) scrollBy(a action, s common.Scene) {
	n, h := len(p.body(s)), p.bodyHeight()
	at, page := p.start(n), max(1, h-1)
	switch a {
	case actUp:
		at--
	case actDown:
		at++
	case actPageUp:
		at -= page
	case actPageDown:
		at += page
	case actTop:
		at = 0
	case actBottom:
		at = n
	}
	at = min(max(0, at), max(0, n-h))
	p.offset, p.follow = at, at >= n-h
}

// View is the pane's title and statements, bodyHeight()+1 lines.
func (p sqlPane) View(s common.Scene) string {
	w, st := p.w, s.Styles
	lines := p.body(s)
	n, bh := len(lines), p.bodyHeight()
	at := p.start(n)
	title := "SQL: each statement as the database ran it, newest last"
	out := []string{st.Section.Render(common.Rule(title, w))}
	if n == 0 {
		out = append(out, st.Caption.Render(common.Cut("No action has run SQL yet: step a worker ("+common.KeyName(p.keys.step)+").", w)))
	}
	out = append(out, common.Box(lines[at:min(n, at+bh)], w, bh-len(out)+1)...)
	return strings.Join(out, "\n")
}

// hint is the pane's last line: where it is, and which keys move and close it.
func (p sqlPane) hint(s common.Scene) string {
	n, bh := len(p.body(s)), p.bodyHeight()
	at := p.start(n)
	where := "the last action"
	if n > bh {
		where = fmt.Sprintf("lines %d–%d of %d", at+1, min(n, at+bh), n)
		if !p.follow {
			where += ", scrolled back"
		}
	}
	hint := fmt.Sprintf("%s · %s: earlier actions · %s %s: close",
		where, common.KeyNames(p.keys.scroll.bindings()...), common.KeyName(p.keys.Toggle), common.KeyName(p.keys.Close))
	return s.Styles.Subtle.Render(common.Cut(hint, p.w))
}
