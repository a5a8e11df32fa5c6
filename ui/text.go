package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
	"leaselab/engine/words"
)

// safeRows returns rows with every text the database holds escaped (words.Escape): any process
// can write a LockedBy (or a key, a status) full of terminal escapes, and the screen shows them
// as visible \x1b, never acts on them. Ordinary values come back unchanged.
func safeRows(rows []engine.Row) []engine.Row {
	out := make([]engine.Row, len(rows))
	for i, r := range rows {
		r.IdempotencyKey, r.Status, r.LockedBy = words.Escape(r.IdempotencyKey), words.Escape(r.Status), words.Escape(r.LockedBy)
		r.PaymentStatus, r.TransactionID = words.Escape(r.PaymentStatus), words.Escape(r.TransactionID)
		out[i] = r
	}
	return out
}

// safeWorker escapes what a worker's memory quotes from the database: the key it holds.
func safeWorker(v engine.WorkerView) engine.WorkerView {
	v.State, v.Holding, v.Last = words.Escape(v.State), words.Escape(v.Holding), words.Escape(v.Last)
	return v
}

// ellipsis ends a cut line.
const ellipsis = "…"

// width is the number of terminal cells s takes (escape sequences take none).
func width(s string) int { return ansi.StringWidth(s) }

// cut shortens s (which may be styled) to at most w cells, ending in an ellipsis when cut.
func cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, ellipsis)
}

// cutLeft keeps the end of a plain string: "…/leaselab.db".
func cutLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) <= w {
		return s
	}
	return ansi.TruncateLeft(s, width(s)-w+1, ellipsis)
}

// pad cuts or pads s (which may be styled) to exactly w cells.
func pad(s string, w int) string {
	s = cut(s, w)
	if n := w - width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// padPlain pads a plain ASCII cell quickly; other text goes through pad.
func padPlain(s string, w int) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return pad(s, w)
		}
	}
	if len(s) > w {
		return cut(s, w)
	}
	return s + spaces(w-len(s))
}

// spaces returns n spaces.
func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(" ", n)
}

// flow lays items out on lines of at most w cells, joined by sep, starting each line with the
// first line's prefix or an indent of the same width.
func flow(prefix string, items []string, sep string, w int) []string {
	var lines []string
	line, n := prefix, width(prefix)
	indent := spaces(n)
	fresh := true
	for _, it := range items {
		iw := width(it)
		switch {
		case fresh:
			line, n, fresh = line+it, n+iw, false
		case n+width(sep)+iw <= w:
			line, n = line+sep+it, n+width(sep)+iw
		default:
			lines = append(lines, line)
			line, n = indent+it, width(indent)+iw
		}
	}
	if !fresh {
		lines = append(lines, line)
	}
	return lines
}

// wrap word-wraps plain text to w cells.
func wrap(text string, w int) []string {
	if w <= 0 {
		return nil
	}
	return strings.Split(ansi.Wrap(text, w, ""), "\n")
}

// box fits lines into exactly h lines of at most w cells: long lines are cut, missing lines
// are blank, extra lines are dropped.
func box(lines []string, w, h int) []string {
	out := make([]string, 0, max(h, 0))
	for i := 0; i < h; i++ {
		if i < len(lines) {
			out = append(out, cut(lines[i], w))
		} else {
			out = append(out, "")
		}
	}
	return out
}

// rule is a section heading drawn across w cells: "─ Outbox ───────".
func rule(title string, w int) string {
	head := "─ " + title + " "
	return cut(head, w) + strings.Repeat("─", max(0, w-width(head)))
}

// plural is word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// wrapHanging wraps s (which may be styled) to w cells, its second and later lines indented by
// indent cells, so that nothing is cut.
func wrapHanging(s string, w, indent int) []string {
	if width(s) <= w || w <= indent+1 {
		return []string{s}
	}
	first, rest, _ := strings.Cut(ansi.Wrap(s, w, ""), "\n")
	rest = strings.TrimLeft(strings.ReplaceAll(rest, "\n", " "), " ")
	lines := []string{first}
	for _, l := range strings.Split(ansi.Wrap(rest, w-indent, ""), "\n") {
		lines = append(lines, spaces(indent)+l)
	}
	return lines
}

// flowWrap lays items out on lines of at most w cells, joined by sep; an item wider than w
// wraps onto lines of its own, indented by two cells, rather than being cut.
func flowWrap(items []string, sep string, w int) []string {
	var lines []string
	line := ""
	for _, it := range items {
		switch {
		case line == "" && width(it) <= w:
			line = it
		case line != "" && width(line)+width(sep)+width(it) <= w:
			line += sep + it
		default:
			if line != "" {
				lines = append(lines, line)
				line = ""
			}
			if width(it) <= w {
				line = it
				continue
			}
			lines = append(lines, wrapHanging(it, w, 2)...)
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// wrapAll wraps each of lines (which may be styled) to w cells; a wrapped line's second and
// later parts are indented by two cells.
func wrapAll(lines []string, w int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, wrapHanging(l, w, 2)...)
	}
	return out
}
