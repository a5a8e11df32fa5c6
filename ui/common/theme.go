package common

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
)

// A theme is a named set of the lab's styles: the default one, and "projector" for a room
// behind a projector, where a washed-out beam loses mid-tones and grey. The lab's --theme
// names one (Theme); NO_COLOR still turns colour off in either, through the renderer.

// ThemeDefault and ThemeProjector are the themes' names, as --theme takes them.
const (
	ThemeDefault   = "default"
	ThemeProjector = "projector"
)

// themes are the themes by name, in the order ThemeNames lists them.
var themes = []struct {
	name   string
	styles func(*lipgloss.Renderer) Styles
}{
	{ThemeDefault, DefaultStyles},
	{ThemeProjector, ProjectorStyles},
}

// ThemeNames are the themes' names, the default first.
func ThemeNames() []string {
	names := make([]string, len(themes))
	for i, t := range themes {
		names[i] = t.name
	}
	return names
}

// Theme returns the styles of the theme called name ("" is the default) for renderer r, or an
// error naming the themes there are.
func Theme(name string, r *lipgloss.Renderer) (Styles, error) {
	if name == "" {
		name = ThemeDefault
	}
	for _, t := range themes {
		if t.name == name {
			return t.styles(r), nil
		}
	}
	return Styles{}, fmt.Errorf("unknown theme %q: choose one of %s", name, strings.Join(ThemeNames(), ", "))
}

// The projector's palette: only colours drawn behind a colour of their own (black or white
// text), so that a badge reads on a light screen and a dark one alike, and none that a beam
// washes out (no grey, no mid-tone text on the terminal's background).
const (
	projInk   = lipgloss.Color("16")  // black
	projPaper = lipgloss.Color("231") // white
	projGreen = lipgloss.Color("28")  // a dark green, under white text
	projRed   = lipgloss.Color("124") // a dark red, under white text
	projAmber = lipgloss.Color("214") // amber, under black text
)

// ProjectorStyles returns the projector theme's styles for renderer r: high contrast. Text is
// the terminal's own colour, bold where it matters, and never coloured on the terminal's own
// background (TestProjectorHasNoColourAlone holds it); a state that the default theme colours is
// drawn as a badge (white on dark red, black on amber, white on dark green) or in reverse
// video, and is also a word or a glyph (CRASHED, EXPIRED, ✓ ok, ✗ FAIL, ◆, •, ▸), so that
// nothing is told by colour alone. The selected worker and the cells the last step changed are
// in reverse video; nothing is grey, not even the separators.
func ProjectorStyles(r *lipgloss.Renderer) Styles {
	n := r.NewStyle
	bold := n().Bold(true)
	onRed := bold.Foreground(projPaper).Background(projRed)
	onGreen := bold.Foreground(projPaper).Background(projGreen)
	onAmber := bold.Foreground(projInk).Background(projAmber)
	s := Styles{
		Title:     bold,
		Subtle:    n(),
		Dim:       n(),
		Detail:    n(),
		Open:      bold,
		Aside:     n().Italic(true),
		Lesson:    bold.Underline(true),
		Section:   bold.Underline(true),
		LeasingOn: onGreen,
		LeasingOf: onRed,
		ToggleOn:  bold.Underline(true),
		ToggleOff: n(),
		Playing:   bold.Underline(true),
		Free:      onAmber,

		Head:       bold.Underline(true),
		Pending:    n(),
		Processing: onAmber,
		Processed:  bold,
		Paid:       bold,
		Failed:     bold.Underline(true),
		Expired:    onRed,
		BarFull:    bold,
		BarEmpty:   n(),
		Duplicate:  onRed,
		Changed:    bold.Reverse(true),
		Selected:   bold.Reverse(true),
		Crashed:    onRed,

		OK:      bold,
		Fail:    onRed,
		Pass:    onGreen,
		Failing: onRed,
		Info:    n(),
		Warn:    bold,
		Error:   onRed,
		Caption: n().Italic(true),
	}
	// The workers are told apart by their names, in bold in the terminal's own colour: a
	// colour of their own would be a mid-tone on one background or the other.
	s.Workers = []lipgloss.Style{bold}
	s.Help = help.Styles{
		ShortKey:       bold,
		ShortDesc:      n(),
		ShortSeparator: n(),
		FullKey:        bold,
		FullDesc:       n(),
		FullSeparator:  n(),
		Ellipsis:       n(),
	}
	return s
}
