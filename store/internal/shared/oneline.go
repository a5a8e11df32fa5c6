package shared

import "strings"

// OneLine writes query on one line (each run of white space one space, quoted text as it is),
// with the parameter at each position i that param recognises replaced by the literal it
// returns; next is the position after the parameter. Both stores' traces show SQL through it.
func OneLine(query string, param func(query string, i int) (literal string, next int, ok bool)) string {
	var b strings.Builder
	quoted, space := false, false
	for i := 0; i < len(query); i++ {
		ch := query[i]
		switch {
		case quoted:
			b.WriteByte(ch)
			quoted = ch != '\''
			continue
		case ch == '\'':
			quoted = true
		case ch == ' ' || ch == '\n' || ch == '\t':
			space = true
			continue
		}
		if lit, next, ok := param(query, i); ok {
			writeSpace(&b, &space)
			b.WriteString(lit)
			i = next - 1
			continue
		}
		writeSpace(&b, &space)
		b.WriteByte(ch)
	}
	return b.String()
}

func writeSpace(b *strings.Builder, pending *bool) {
	if *pending && b.Len() > 0 {
		b.WriteByte(' ')
	}
	*pending = false
}
