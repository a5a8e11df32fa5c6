package ui

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"leaselab/ui/common"
)

// TestWatchProjectorHasNoColourAlone holds the watch in the projector theme (leaselab watch
// --theme projector, the screen a workshop's room sees) to the lab's rule: no grey, no colour on
// the terminal's own background, the expired lease and the watch's badge bold or reversed, and
// the cells the last read changed in reverse video.
func TestWatchProjectorHasNoColourAlone(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	st, err := common.Theme(common.ThemeProjector, r)
	if err != nil {
		t.Fatal(err)
	}
	_, w := workshopMoment(t)
	w.m.styles, w.m.help.Styles = st, st.Help
	for _, e := range projectorFaults(w.m.View(), []string{"EXPIRED", "WATCH (read-only)", "LEASELAB"}) {
		t.Error(e)
	}
	// The default theme fails the same check (it has grey): the check can fail.
	w.m.styles = common.DefaultStyles(r)
	if len(projectorFaults(w.m.View(), nil)) == 0 {
		t.Fatal("the default theme's watch passes the projector's check: the check sees nothing")
	}
}

// TestWatchRefusesAnUnknownTheme: the watch's styles are made by name, as the lab's are.
func TestWatchRefusesAnUnknownTheme(t *testing.T) {
	_, err := NewWatch(context.Background(), WatchConfig{DB: newShared(t, 1).db}, Terminal{In: strings.NewReader(""), Out: io.Discard, Theme: "beamer"})
	if err == nil || !strings.Contains(err.Error(), "projector") {
		t.Fatalf("NewWatch with theme beamer: %v, want an error naming the themes", err)
	}
}
