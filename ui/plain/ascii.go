package plain

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Plain mode writes ASCII only: a screen reader spells out what it cannot pronounce, and a
// braille display or an old console shows it as noise. The engine's sentences use a few
// typographic marks (PAY-001 ×2, 09:00:00.000Z → 09:00:00.600Z, the verdict's ✅); they are
// said in ASCII words here, once, for every sentence plain mode prints.

// asciiWords are the marks the engine's words use, in ASCII.
var asciiWords = strings.NewReplacer(
	"\u00a0", " ", // a space that does not break
	"×", "x", "→", "->", "←", "<-", "↑", "up", "↓", "down",
	"—", "--", "–", "-", "…", "...", "·", "-", "•", "*", "▸", ">",
	"‘", "'", "’", "'", "“", "\"", "”", "\"",
	"≥", ">=", "≤", "<=", "≠", "!=", "µs", "us", "µ", "u",
	"✅", "(passed)", "❌", "(failed)", "✓", "ok", "✗", "FAIL",
	"◆", "*", "○", "o", "↻", "again", "█", "#", "░", ".",
)

// ASCII returns s with the engine's marks in ASCII words, every other rune beyond ASCII as '?'
// and every control character but a newline as a space: what plain mode prints is ASCII with
// no escape sequence, whatever a scenario file or a database row holds. unknown counts the
// runes that had no word (a test holds it to 0 for every built-in lesson).
func ASCII(s string) (out string, unknown int) {
	s = asciiWords.Replace(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteByte('\n')
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		case r >= utf8.RuneSelf:
			b.WriteByte('?')
			unknown++
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), unknown
}

// printer writes plain mode's lines: ASCII, each line once, never redrawn. In a terminal's raw
// mode (single keys) a newline does not return the carriage, so crlf writes "\r\n".
type printer struct {
	w       io.Writer
	crlf    bool
	unknown int   // runes written as '?'
	err     error // the first write that failed
}

// line writes one line (or several, split at '\n').
func (p *printer) line(format string, args ...any) {
	if p.err != nil {
		return
	}
	text := format
	if len(args) > 0 {
		text = fmt.Sprintf(format, args...)
	}
	text, n := ASCII(text)
	p.unknown += n
	nl := "\n"
	if p.crlf {
		nl = "\r\n"
	}
	text = strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", nl) + nl
	_, p.err = io.WriteString(p.w, text)
}
