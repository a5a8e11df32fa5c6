package words

// Plural is word, with an "s" unless n is one.
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// orNone is s, or NULL for an empty column.
func orNone(s string) string {
	if s == "" {
		return "NULL"
	}
	return s
}

// PassFail is a check's result in one word.
func PassFail(b bool) string {
	if b {
		return "pass"
	}
	return "fail"
}
