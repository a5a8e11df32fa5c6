package common

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
)

// Palette: ANSI 256 mid-tones that read on a dark terminal and on a light projector alike, so
// that the lab never needs to ask the terminal for its background colour.
const (
	colorSubtle     = lipgloss.Color("244")
	colorAccent     = lipgloss.Color("75")
	colorOK         = lipgloss.Color("35")
	colorBad        = lipgloss.Color("160")
	colorWarn       = lipgloss.Color("172")
	colorProcessing = lipgloss.Color("214")
	colorHighlight  = lipgloss.Color("228")
	colorInk        = lipgloss.Color("16")
	colorPaper      = lipgloss.Color("231")
)

// Styles are the lab's styles. Every state they mark is also spelled in words or glyphs,
// because NO_COLOR (and the ASCII profile) drops colour, bold and reverse alike. Nothing a
// reader needs is drawn in grey, which a projector washes out: grey (Dim) is for separators
// and the empty part of a bar only.
type Styles struct {
	Title     lipgloss.Style
	Subtle    lipgloss.Style // secondary text: the terminal's own colour, never grey
	Dim       lipgloss.Style // decoration only: separators
	Detail    lipgloss.Style // a check's detail
	Open      lipgloss.Style // a check that waits for the run to finish ("… open")
	Aside     lipgloss.Style // a check outside the lesson's verdict ("○")
	Lesson    lipgloss.Style // the toggle the lesson teaches ("◆")
	Section   lipgloss.Style
	LeasingOn lipgloss.Style // the LEASING ON badge
	LeasingOf lipgloss.Style // the LEASING OFF badge
	ToggleOn  lipgloss.Style
	ToggleOff lipgloss.Style
	Playing   lipgloss.Style
	Free      lipgloss.Style // the FREE-RUNNING badge

	Head       lipgloss.Style // table heading
	Pending    lipgloss.Style
	Processing lipgloss.Style
	Processed  lipgloss.Style
	Paid       lipgloss.Style
	Failed     lipgloss.Style
	Expired    lipgloss.Style
	BarFull    lipgloss.Style
	BarEmpty   lipgloss.Style
	Duplicate  lipgloss.Style
	Changed    lipgloss.Style // a cell the last step changed
	Selected   lipgloss.Style // the selected worker's line
	Crashed    lipgloss.Style

	OK      lipgloss.Style
	Fail    lipgloss.Style
	Pass    lipgloss.Style // verdict banner, passing
	Failing lipgloss.Style // verdict banner, failing
	Info    lipgloss.Style
	Warn    lipgloss.Style
	Error   lipgloss.Style
	Caption lipgloss.Style

	Workers []lipgloss.Style // one per worker colour
	Help    help.Styles
}

// DefaultStyles returns the lab's styles for renderer r (its colour profile decides what
// reaches the terminal; lipgloss honours NO_COLOR through it).
func DefaultStyles(r *lipgloss.Renderer) Styles {
	n := r.NewStyle
	s := Styles{
		Title:     n().Bold(true),
		Subtle:    n(),
		Dim:       n().Foreground(colorSubtle),
		Detail:    n(),
		Open:      n().Foreground(colorProcessing),
		Aside:     n().Italic(true),
		Lesson:    n().Bold(true).Foreground(colorAccent),
		Section:   n().Bold(true).Foreground(colorAccent),
		LeasingOn: n().Bold(true).Foreground(colorInk).Background(colorOK),
		LeasingOf: n().Bold(true).Foreground(colorPaper).Background(colorBad),
		ToggleOn:  n().Bold(true).Foreground(colorOK),
		ToggleOff: n(),
		Playing:   n().Bold(true).Foreground(colorOK),
		Free:      n().Bold(true).Foreground(colorInk).Background(colorProcessing),

		Head:       n().Bold(true),
		Pending:    n(),
		Processing: n().Bold(true).Foreground(colorProcessing),
		Processed:  n().Foreground(colorOK),
		Paid:       n().Foreground(colorOK),
		Failed:     n().Foreground(colorWarn),
		Expired:    n().Bold(true).Foreground(colorPaper).Background(colorBad),
		BarFull:    n().Foreground(colorProcessing),
		BarEmpty:   n().Foreground(colorSubtle),
		Duplicate:  n().Bold(true).Foreground(colorBad),
		Changed:    n().Foreground(colorInk).Background(colorHighlight),
		Selected:   n().Bold(true),
		Crashed:    n().Bold(true).Foreground(colorPaper).Background(colorBad),

		OK:      n().Foreground(colorOK),
		Fail:    n().Bold(true).Foreground(colorBad),
		Pass:    n().Bold(true).Foreground(colorInk).Background(colorOK),
		Failing: n().Bold(true).Foreground(colorPaper).Background(colorBad),
		Info:    n(),
		Warn:    n().Foreground(colorWarn),
		Error:   n().Bold(true).Foreground(colorBad),
		Caption: n().Italic(true),
	}
	// The workers' own colours, in declared order (then round again).
	for _, c := range []lipgloss.Color{"33", "208", "35", "170", "37", "178", "99", "167"} {
		s.Workers = append(s.Workers, n().Foreground(c))
	}
	s.Help = help.Styles{
		ShortKey:       n().Bold(true),
		ShortDesc:      n(),
		ShortSeparator: n().Foreground(colorSubtle),
		FullKey:        n().Bold(true),
		FullDesc:       n(),
		FullSeparator:  n().Foreground(colorSubtle),
		Ellipsis:       n().Foreground(colorSubtle),
	}
	return s
}

// Worker returns Worker i's style.
func (s Styles) Worker(i int) lipgloss.Style {
	if i < 0 || len(s.Workers) == 0 {
		return s.Info
	}
	return s.Workers[i%len(s.Workers)]
}
