package ui

import "fmt"

// The window's size is the terminal's to say, and over SSH the client's: a pty request or a
// window change may ask for 4294967295 rows. Every screen is drawn in at most MaxWidth×MaxHeight
// cells, the top-left of a larger window, so that no size a client asks for makes the lab
// allocate more than a screen of that size (a View at 2^32−1 rows ran the server out of memory).

// MaxWidth and MaxHeight are the largest window any screen is drawn in: more than a 4K monitor
// shows in a small font, a few hundred kilobytes a frame.
const (
	MaxWidth  = 500
	MaxHeight = 200
)

// FitWindow is the size a screen is drawn in for a window of w×h cells: within MaxWidth×MaxHeight
// and not negative. fitted reports whether the window was larger.
func FitWindow(w, h int) (fw, fh int, fitted bool) {
	fw, fh = min(max(w, 0), MaxWidth), min(max(h, 0), MaxHeight)
	return fw, fh, fw != w || fh != h
}

// OversizeMsg tells the lab that its terminal asked for a window of Width×Height, larger than
// it draws in (the server fitted it before the program saw it): the lab says so on its status
// line.
type OversizeMsg struct{ Width, Height int }

// oversizeNote is the status line for a window of w×h larger than the lab draws in.
func oversizeNote(w, h int) string {
	fw, fh, _ := FitWindow(w, h)
	return fmt.Sprintf("this terminal is %d×%d: the lab draws in at most %d×%d cells, here %d×%d at the top left",
		w, h, MaxWidth, MaxHeight, fw, fh)
}
