package plain

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// A raw terminal's reads become the lab's key names: several keys typed at once are each a
// press, arrows and shift+tab are their names, a lone ESC is esc, ctrl+c is ctrl+c, and an
// escape sequence plain mode has no key for is dropped whole.
func TestRawKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"n", []string{"n"}},
		{"nnx", []string{"n", "n", "x"}},
		{" ", []string{" "}},
		{"\x1b[D\x1b[C", []string{"left", "right"}},
		{"\x1bOD", []string{"left"}},
		{"\x1b[Z", []string{"shift+tab"}},
		{"\x1b", []string{"esc"}},
		{"\x03", []string{"ctrl+c"}},
		{"\x1b[15~A", []string{"A"}}, // F5, then A
		{"\r\t", []string{"enter", "tab"}},
	} {
		var got []string
		for _, k := range rawKeys([]byte(tc.in)) {
			got = append(got, k.name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("rawKeys(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A piped line is a key: a character, or a name; blank lines and comments are skipped, and a
// line that names no key arrives as bad.
func TestLineKeys(t *testing.T) {
	in := "n\n\n# a comment\nspace\n  LEFT \nesc\nhello\n+\n"
	ch := make(chan press)
	go readLines(context.Background(), strings.NewReader(in), ch)
	var got []string
	for k := range ch {
		if k.bad != "" {
			got = append(got, "bad:"+k.bad)
			continue
		}
		got = append(got, k.name)
	}
	want := []string{"n", " ", "left", "esc", "bad:hello", "+"}
	if !slices.Equal(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
}

// ASCII says the engine's marks in words and never lets a byte beyond ASCII or a control
// character through.
func TestASCII(t *testing.T) {
	got, unknown := ASCII("PAY-001 ×2 → ok ✅\u00a0\x1b[31mred\x07 Ω\n")
	if want := "PAY-001 x2 -> ok (passed)  [31mred  ?\n"; got != want || unknown != 1 {
		t.Fatalf("ASCII = %q (%d unknown), want %q (1)", got, unknown, want)
	}
}
