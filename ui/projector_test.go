package ui

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"leaselab/engine"
	"leaselab/ui/common"
)

// sgr is one escape sequence that sets the text's style, and the text after it.
var sgr = regexp.MustCompile("\x1b\\[([0-9;]*)m([^\x1b]*)")

// TestNothingReadsOnlyInGrey renders lessons in 256 colours and fails when text in the grey of
// the palette (244, washed out on a projector) is more than decoration: separators, the empty
// part of a lease bar, blanks. The lesson's marker, the switches that are off and the checks
// outside a verdict must read by weight, a word or a glyph.
func TestNothingReadsOnlyInGrey(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"stale-owner", nil},               // ◆ own-check, checks set aside
		{"lease-too-short", []string{"n"}}, // heartbeat on, the others off
		{"playground", []string{"n", "x", "f"}},
	} {
		for _, size := range [][2]int{{120, 40}, {80, 24}} {
			l := newLab(t, tc.name, size[0], size[1], engine.Overrides{})
			l.m.styles = common.DefaultStyles(r)
			l.press(tc.keys...)
			if tc.keys == nil {
				stepToEnd(t, l)
			}
			v := l.view()
			if !strings.Contains(v, "\x1b[") {
				t.Fatal("no colour in the screen: the test renders nothing to look at")
			}
			for _, m := range sgr.FindAllStringSubmatch(v, -1) {
				params, text := ";"+m[1]+";", m[2]
				if strings.Contains(params, ";38;5;244;") && strings.Trim(text, " ·░│─") != "" {
					t.Errorf("%s at %dx%d: %q is drawn only in grey", tc.name, size[0], size[1], text)
				}
			}
		}
	}
}
