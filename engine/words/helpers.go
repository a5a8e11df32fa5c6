package words

import "cmp"

// Plural is word, with an "s" unless n is one.
func Plural(n int, word string) string {
	if n != 1 {
		word += "s"
	}
	return word
}

// PassFail is a check's result in one word.
func PassFail(b bool) string { return map[bool]string{true: "pass", false: "fail"}[b] }

// orNull is s, or NULL for an empty column.
func orNull(s string) string { return cmp.Or(s, "NULL") }
