package words

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text that leaselab prints comes from files and databases that anybody can write: a title, a
// LockedBy value. A terminal acts on control characters (ESC starts a sequence that can move the
// cursor, retitle the window or hide text), so none may reach it raw.

// unsafeRune reports whether r must not be printed as it is: C0 controls other than a tab, DEL,
// C1 controls, and the Unicode controls that reorder or hide text (bidi overrides and isolates,
// line and paragraph separators).
func unsafeRune(r rune) bool {
	switch {
	case r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029, r == 0x200e, r == 0x200f:
		return true
	}
	return false
}

// controlNames are the short names people know control characters by.
var controlNames = map[rune]string{0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x0a: "LF", 0x0d: "CR", 0x1b: "ESC", 0x7f: "DEL", 0x9b: "CSI"}

// DescribeRune names r for an error message: "ESC (U+001B)".
func DescribeRune(r rune) string {
	if n, ok := controlNames[r]; ok {
		return fmt.Sprintf("%s (U+%04X)", n, r)
	}
	return fmt.Sprintf("U+%04X", r)
}

// FirstUnsafe returns the first rune of s that Escape would change, and whether there is one.
func FirstUnsafe(s string) (rune, bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r) || (r == utf8.RuneError && size <= 1) {
			return r, true
		}
		i += size
	}
	return 0, false
}

// Escape makes s safe to print on a terminal and in a report: every control character (and
// every byte that is not UTF-8) is written as a visible escape, \x1b or \u202e; a backslash is
// doubled only when s needed escaping, so ordinary text is returned unchanged. It is the one
// function every place that shows data from a file or a database uses.
func Escape(s string) string {
	if _, bad := FirstUnsafe(s); !bad {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case unsafeRune(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}
