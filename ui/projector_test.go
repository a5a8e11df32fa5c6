package ui

import (
	"fmt"
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

// TestProjectorHasNoColourAlone holds the projector theme to more than the default's: no grey
// at all, no text coloured on the terminal's own background (a colour is a badge: its text has
// a colour of its own), and the states a room must see — CRASHED, EXPIRED, the verdict, the
// selected worker — in bold or in reverse video.
func TestProjectorHasNoColourAlone(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	st, err := common.Theme(common.ThemeProjector, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		keys []string
		want []string // words that must be bold or reversed
	}{
		{"stale-owner", nil, []string{"VERDICT: PASS"}},
		{"before", nil, []string{"VERDICT: FAIL"}},
		{"playground", []string{"n", "x", "f"}, []string{"CRASHED", "EXPIRED", "LEASING ON"}},
	} {
		for _, size := range [][2]int{{120, 40}, {80, 24}} {
			l := newLab(t, tc.name, size[0], size[1], engine.Overrides{})
			l.m.styles = st
			l.press(tc.keys...)
			if tc.keys == nil {
				stepToEnd(t, l)
			}
			for _, e := range projectorFaults(l.view(), tc.want) {
				t.Errorf("%s at %dx%d: %s", tc.name, size[0], size[1], e)
			}
		}
	}
}

// projectorFaults is what the projector theme forbids in screen v (rendered in 256 colours):
// grey, text coloured on the terminal's own background, a word of want that is neither bold
// nor reversed, and nothing at all in reverse video (the selection or the last change is).
func projectorFaults(v string, want []string) []string {
	if !strings.Contains(v, "\x1b[") {
		return []string{"no style in the screen: the test renders nothing to look at"}
	}
	var faults []string
	strong := map[string]bool{}
	reversed := false
	for _, m := range sgr.FindAllStringSubmatch(v, -1) {
		params, text := ";"+m[1]+";", m[2]
		if strings.Trim(text, " ") == "" {
			continue
		}
		fg := strings.Contains(params, ";38;")
		bg := strings.Contains(params, ";48;")
		switch {
		case strings.Contains(params, ";38;5;244;") || strings.Contains(params, ";48;5;244;"):
			faults = append(faults, fmt.Sprintf("%q is grey", text))
		case fg != bg:
			faults = append(faults, fmt.Sprintf("%q is coloured on the terminal's own background (SGR %s)", text, m[1]))
		}
		if strings.Contains(params, ";1;") || strings.Contains(params, ";7;") {
			for _, w := range want {
				if strings.Contains(text, w) {
					strong[w] = true
				}
			}
		}
		reversed = reversed || strings.Contains(params, ";7;")
	}
	for _, w := range want {
		if !strong[w] {
			faults = append(faults, fmt.Sprintf("%q is not bold or reversed", w))
		}
	}
	if !reversed {
		faults = append(faults, "nothing in reverse video (the selection or the last change is)")
	}
	return faults
}

// TestUnknownThemeIsRefused: a theme's name is checked where the styles are made.
func TestUnknownThemeIsRefused(t *testing.T) {
	if _, err := common.Theme("beamer", lipgloss.DefaultRenderer()); err == nil || !strings.Contains(err.Error(), "projector") {
		t.Fatalf("Theme(beamer) = %v, want an error naming the themes", err)
	}
	for _, name := range append(common.ThemeNames(), "") {
		if _, err := common.Theme(name, lipgloss.DefaultRenderer()); err != nil {
			t.Fatalf("Theme(%q): %v", name, err)
		}
	}
}
