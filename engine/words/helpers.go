package words

import (
	"cmp"
	"strings"
)

// Plural is word in English's plural unless n is one: "rows", "batches", "retries".
func Plural(n int, word string) string {
	switch {
	case n == 1:
		return word
	case strings.HasSuffix(word, "ch") || strings.HasSuffix(word, "sh") || strings.HasSuffix(word, "x") || strings.HasSuffix(word, "ss"):
		return word + "es"
	case len(word) > 1 && word[len(word)-1] == 'y' && !strings.ContainsRune("aeiou", rune(word[len(word)-2])):
		return word[:len(word)-1] + "ies"
	}
	return word + "s"
}

// PassFail is a check's result in one word.
func PassFail(b bool) string { return map[bool]string{true: "pass", false: "fail"}[b] }

// orNull is s, or NULL for an empty column.
func orNull(s string) string { return cmp.Or(s, "NULL") }
