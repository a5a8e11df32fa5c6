package words

import "testing"

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"Worker-A":             "Worker-A",
		"PAY-001 → Worker-B ✅": "PAY-001 → Worker-B ✅",
		`back\slash`:           `back\slash`,
		"a\x1b[2Jb":            `a\x1b[2Jb`,
		"bell\x07\\":           `bell\x07\\`,
		"nul\x00":              `nul\x00`,
		"c1\u009b":             `c1\u009b`,
		"bidi\u202e":           `bidi\u202e`,
		"bad\xffutf8":          `bad\xffutf8`,
		"tab\tkept":            "tab\tkept",
		"new\nline":            `new\x0aline`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n          int
		word, want string
	}{{1, "batch", "batch"}, {0, "row", "rows"}, {2, "batch", "batches"}, {3, "fetch", "fetches"}, {2, "retry", "retries"}, {2, "key", "keys"}, {2, "box", "boxes"}} {
		if got := Plural(c.n, c.word); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}
