// Package rescuer is the rescuer pane: the sweeper beside the workers, what it read and its
// counts.
package rescuer

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/ui/common"
)

// Pane is the rescuer, an actor beside the workers (a sweeper that moves expired leases
// back to Pending on its own schedule): what its last sweep read and has yet to rescue, and
// its counts. It has lines only in a scenario with a rescuer, and no keys: its steps (R scan,
// R rescue) are the script's, run by the step key as any other.
type Pane struct{ w, h int }

// New returns the rescuer pane, empty until a frame has a rescuer.
func New() common.Pane { return Pane{} }

// ShortHelp is the pane's keys: none (help.KeyMap).
func (p Pane) ShortHelp() []key.Binding { return nil }

// FullHelp is the pane's keys: none (help.KeyMap).
func (p Pane) FullHelp() [][]key.Binding { return nil }

// Update takes no message: the pane only draws the frame.
func (p Pane) Update(tea.Msg, common.Scene) (common.Pane, tea.Msg) { return p, nil }

// SetSize gives the pane its width and height.
func (p Pane) SetSize(w, h int) common.Pane { p.w, p.h = w, h; return p }

// Want is a title and a line while the scenario has a rescuer, none otherwise.
func (p Pane) Want(s common.Scene, _ int) int {
	if s.Frame == nil || s.Frame.Rescuer == nil {
		return 0
	}
	return 2
}

// View is the title (when there are two lines) and the rescuer's line.
func (p Pane) View(s common.Scene) string {
	if p.h <= 0 || s.Frame == nil || s.Frame.Rescuer == nil {
		return ""
	}
	r := s.Frame.Rescuer
	c := r.Counts
	var lines []string
	if p.h >= 2 {
		lines = append(lines, s.Styles.Section.Render(common.Rule(fmt.Sprintf("Rescuer: a sweeper on its own connection, every %s", common.ShortDuration(r.Every)), p.w)))
	}
	holds := "holds nothing"
	if len(r.Read) > 0 {
		parts := make([]string, len(r.Read))
		for i, e := range r.Read {
			parts[i] = fmt.Sprintf("%s (%s, v%d)", e.IdempotencyKey, common.OrDash(e.LockedBy), e.LeaseVersion)
		}
		holds = "read " + strings.Join(parts, ", ") + ", to rescue"
	}
	line := fmt.Sprintf("  R %s  %s  sweeps %d · seen %d · rescued %d · refused %d", s.Styles.Subtle.Render(r.Name), holds,
		c.Sweeps, c.Seen, c.Rescued, c.Refused)
	if c.RescuedFinished > 0 {
		line += " · " + s.Styles.Duplicate.Render(fmt.Sprintf("!! undid a finish %d", c.RescuedFinished))
	}
	lines = append(lines, line)
	return strings.Join(common.Box(lines, p.w, p.h), "\n")
}
