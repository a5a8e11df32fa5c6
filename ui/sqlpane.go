package ui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
)

// sqlPane is the SQL pane (v): every statement the actions in the frame ran, as the store
// recorded them (engine.Trace, put in words by engine.SQLLines: the UI writes no SQL), newest
// last. It opens on the last action and follows each new one; its own scrolling (the outbox's
// scroll keys, while it is open) moves back to earlier actions.
type sqlPane struct {
	keys   ScrollKeys // its own, on while it is open
	open   bool
	follow bool // pinned to the end: the last action
	offset int  // the first body line shown, when not following
}

// sqlBodyHeight is how many lines of statements the pane shows: the screen less its title, the
// status line and its hint line.
func (m Model) sqlBodyHeight() int { return max(1, m.layout.height-3) }

// sqlLines is the pane's body at width w: for each action that ran SQL, its event in words
// (as the event log writes it), then each statement, wrapped under it.
func (m Model) sqlLines(w int) []string {
	f := m.frame
	if f == nil {
		return nil
	}
	st := &m.styles
	idx := f.workerIndex()
	var out []string
	for _, e := range f.Events {
		lines := engine.SQLLines(e.Trace)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		// The event in words, on two lines when it is wider than the pane, as the event log does.
		head := m.eventLine(e, false, idx)
		if parts := strings.SplitN(ansi.Wrap(head, w, ""), "\n", 2); len(parts) == 2 {
			out = append(out, parts[0], cut(spaces(eventIndent)+strings.ReplaceAll(parts[1], "\n", " "), w))
		} else {
			out = append(out, cut(head, w))
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
				lead := spaces(sqlIndent)
				if i > 0 {
					lead = spaces(sqlIndent + 2)
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

// sqlStart is the first body line shown: the end when following, else offset, within bounds.
func (m Model) sqlStart(n int) int {
	h := m.sqlBodyHeight()
	if m.sql.follow || m.sql.offset > n-h {
		return max(0, n-h)
	}
	return max(0, m.sql.offset)
}

// scrollSQL moves the pane by a scroll action; reaching the end follows again.
func (m *Model) scrollSQL(a action) {
	n, h := len(m.sqlLines(m.layout.width)), m.sqlBodyHeight()
	at, page := m.sqlStart(n), max(1, h-1)
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
	m.sql.offset, m.sql.follow = at, at >= n-h
}

// toggleSQL opens the pane on the last action, or closes it.
func (m *Model) toggleSQL() {
	m.sql = sqlPane{keys: DefaultScrollKeys(), open: !m.sql.open, follow: true}
}

// sqlView is the pane in exactly the window: a title, the statements, and a line that says
// where it is and which keys move it.
func (m Model) sqlView() string {
	w, h := m.layout.width, m.layout.height
	st := &m.styles
	lines := m.sqlLines(w)
	n, bh := len(lines), m.sqlBodyHeight()
	at := m.sqlStart(n)
	title := "SQL: each statement as the database ran it, newest last"
	out := []string{st.Section.Render(rule(title, w))}
	if n == 0 {
		out = append(out, st.Caption.Render(cut("No action has run SQL yet: step a worker ("+keyName(m.keys.Step)+").", w)))
	}
	out = append(out, box(lines[at:min(n, at+bh)], w, bh-len(out)+1)...)
	where := "the last action"
	if n > bh {
		where = fmt.Sprintf("lines %d–%d of %d", at+1, min(n, at+bh), n)
		if !m.sql.follow {
			where += ", scrolled back"
		}
	}
	hint := fmt.Sprintf("%s · %s: earlier actions · %s %s: close",
		where, keyNames(m.sql.keys.bindings()...),
		keyName(m.keys.SQL), keyName(m.keys.Close))
	out = append(out, m.statusView(w, 1)...)
	out = append(out, st.Subtle.Render(cut(hint, w)))
	return strings.Join(box(out, w, h), "\n")
}

// sqlKey handles the keys the SQL pane takes: v opens or closes it, w writes the transcript,
// and while it is open the scroll keys move it (even when the outbox has nothing to scroll) and
// esc closes it. ok is false for every other key.
func (m Model) sqlKey(k tea.KeyMsg) (_ Model, _ tea.Cmd, ok bool) {
	act, _ := m.keys.match(k)
	if m.sql.open {
		if a, _ := m.sql.keys.match(k); a != actNone {
			act = a
		}
	}
	switch {
	case act == actSQL:
		m.toggleSQL()
		return m, nil, true
	case act == actTranscript:
		mm, cmd := m.writeTranscript()
		return mm, cmd, true
	case !m.sql.open:
		return m, nil, false
	case act == actClose:
		m.sql.open = false
		return m, nil, true
	case act == actUp, act == actDown, act == actPageUp, act == actPageDown, act == actTop, act == actBottom:
		m.scrollSQL(act)
		return m, nil, true
	}
	return m, nil, false
}
