package common

import (
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
	"leaselab/engine/words"
)

// SafeRows returns rows with every text the database holds escaped (words.Escape): any process
// can write a LockedBy (or a key, a status) full of terminal escapes, and the screen shows them
// as visible \x1b, never acts on them. Ordinary values come back unchanged.
func SafeRows(rows []engine.Row) []engine.Row {
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

// Ellipsis ends a cut line.
const Ellipsis = "…"

// Width is the number of terminal cells s takes (escape sequences take none).
func Width(s string) int { return ansi.StringWidth(s) }

// Cut shortens s (which may be styled) to at most w cells, ending in an ellipsis when Cut.
func Cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if Width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, Ellipsis)
}

// CutLeft keeps the end of a plain string: "…/leaselab.db".
func CutLeft(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if Width(s) <= w {
		return s
	}
	return ansi.TruncateLeft(s, Width(s)-w+1, Ellipsis)
}

// Pad cuts or pads s (which may be styled) to exactly w cells.
func Pad(s string, w int) string {
	s = Cut(s, w)
	if n := w - Width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// PadPlain pads a plain ASCII cell quickly; other text goes through pad.
func PadPlain(s string, w int) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return Pad(s, w)
		}
	}
	if len(s) > w {
		return Cut(s, w)
	}
	return s + Spaces(w-len(s))
}

// Spaces returns n Spaces.
func Spaces(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(" ", n)
}

// Flow lays items out on lines of at most w cells, joined by sep, starting each line with the
// first line's prefix or an indent of the same width.
func Flow(prefix string, items []string, sep string, w int) []string {
	var lines []string
	line, n := prefix, Width(prefix)
	indent := Spaces(n)
	fresh := true
	for _, it := range items {
		iw := Width(it)
		switch {
		case fresh:
			line, n, fresh = line+it, n+iw, false
		case n+Width(sep)+iw <= w:
			line, n = line+sep+it, n+Width(sep)+iw
		default:
			lines = append(lines, line)
			line, n = indent+it, Width(indent)+iw
		}
	}
	if !fresh {
		lines = append(lines, line)
	}
	return lines
}

// Wrap word-wraps plain text to w cells.
func Wrap(text string, w int) []string {
	if w <= 0 {
		return nil
	}
	return strings.Split(ansi.Wrap(text, w, ""), "\n")
}

// Box fits lines into exactly h lines of at most w cells: long lines are cut, missing lines
// are blank, extra lines are dropped.
func Box(lines []string, w, h int) []string {
	out := make([]string, 0, max(h, 0))
	for i := 0; i < h; i++ {
		if i < len(lines) {
			out = append(out, Cut(lines[i], w))
		} else {
			out = append(out, "")
		}
	}
	return out
}

// Rule is a section heading drawn across w cells: "─ Outbox ───────".
func Rule(title string, w int) string {
	head := "─ " + title + " "
	return Cut(head, w) + strings.Repeat("─", max(0, w-Width(head)))
}

// Plural is word, with an s unless n is 1.
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// WrapHanging wraps s (which may be styled) to w cells, its second and later lines indented by
// indent cells, so that nothing is cut.
func WrapHanging(s string, w, indent int) []string {
	if Width(s) <= w || w <= indent+1 {
		return []string{s}
	}
	first, rest, _ := strings.Cut(ansi.Wrap(s, w, ""), "\n")
	rest = strings.TrimLeft(strings.ReplaceAll(rest, "\n", " "), " ")
	lines := []string{first}
	for _, l := range strings.Split(ansi.Wrap(rest, w-indent, ""), "\n") {
		lines = append(lines, Spaces(indent)+l)
	}
	return lines
}

// FlowWrap lays items out on lines of at most w cells, joined by sep; an item wider than w
// wraps onto lines of its own, indented by two cells, rather than being cut.
func FlowWrap(items []string, sep string, w int) []string {
	var lines []string
	line := ""
	for _, it := range items {
		switch {
		case line == "" && Width(it) <= w:
			line = it
		case line != "" && Width(line)+Width(sep)+Width(it) <= w:
			line += sep + it
		default:
			if line != "" {
				lines = append(lines, line)
				line = ""
			}
			if Width(it) <= w {
				line = it
				continue
			}
			lines = append(lines, WrapHanging(it, w, 2)...)
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// WrapAll wraps each of lines (which may be styled) to w cells; a wrapped line's second and
// later parts are indented by two cells.
func WrapAll(lines []string, w int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, WrapHanging(l, w, 2)...)
	}
	return out
}

// ShortDuration writes a lease's time left in at most 6 cells: 500ms, 12.5s, 3m0s.
func ShortDuration(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 100*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// OrDash is s, or a dash when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Refusal is an engine's refusal (engine.ErrNotNow, engine.ErrNotReplayable) in the words a
// person reads: what it says before the sentinel's own text, which only the program needs
// ("Worker-A is not crashed", not "…: action not possible now").
func Refusal(err error) string {
	text := err.Error()
	for _, sentinel := range []error{engine.ErrNotReplayable, engine.ErrNotNow} {
		text = strings.TrimSuffix(text, ": "+sentinel.Error())
	}
	return text
}
