package serve

import (
	"bytes"
	"regexp"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"leaselab/ui/common"
)

// TestSharedTeacherProjectorTheme: the shared room's teacher screen in the projector theme
// (serve --shared … --theme projector) draws nothing faint and no text coloured on the
// terminal's own background; the default theme does both, so the check can fail.
func TestSharedTeacherProjectorTheme(t *testing.T) {
	sgr := regexp.MustCompile("\x1b\\[([0-9;]*)m([^\x1b]*)")
	faults := func(theme string) int {
		r := lipgloss.NewRenderer(&bytes.Buffer{})
		r.SetColorProfile(termenv.ANSI256)
		var m tea.Model = &roomTeacher{st: newRoomStyles(r, theme), keys: newTeacherKeys(roomToggles(false)), sel: 3, sr: &sharedRoom{s: &Server{}}}
		m, _ = m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		m, _ = m.Update(frameMsg{roomFrame()})
		n := 0
		for _, s := range sgr.FindAllStringSubmatch(m.View(), -1) {
			p := ";" + s[1] + ";"
			if s[2] == "" {
				continue
			}
			if regexp.MustCompile(`;2;`).MatchString(p) || (regexp.MustCompile(`;3[0-7];|;38;`).MatchString(p) && !regexp.MustCompile(`;4[0-7];|;48;`).MatchString(p)) {
				t.Logf("%s: %q in SGR %s", theme, s[2], s[1])
				n++
			}
		}
		return n
	}
	if n := faults(common.ThemeProjector); n != 0 {
		t.Errorf("the projector theme's room screen: %d faint or coloured texts", n)
	}
	if faults(common.ThemeDefault) == 0 {
		t.Fatal("the default theme's room screen has nothing faint or coloured: the check sees nothing")
	}
}
