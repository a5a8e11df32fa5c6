package serve

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
	"leaselab/ui"
)

// TestTeacherView: the table fits the window, says how many rows it left out, and prints user
// names without their escape sequences.
func TestTeacherView(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var rows []Info
	for i := range 30 {
		rows = append(rows, Info{User: fmt.Sprintf("user%02d", i), Addr: "10.0.0.1:5000", Scenario: "after",
			LastKey: t0.Add(-90 * time.Second), Status: ui.LabStatus{Steps: i, Framed: true,
				Settings: engine.Settings{Leasing: true, AtomicClaim: true, Heartbeat: true}, Verdict: "5 hold, 2 open"}})
	}
	rows[0].User = "evil\x1b]0;pwned\x07"
	rows[1].User = "ana\u202eTXT.exe"
	r := lipgloss.NewRenderer(&bytes.Buffer{})
	m := teacherModel{scenarios: []string{"playground", "after"}, max: 40, bold: r.NewStyle(), subtle: r.NewStyle()}
	next, _ := m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	next, _ = next.Update(tableMsg{rows: rows, at: t0})
	v := next.View()
	lines := strings.Split(v, "\n")
	if len(lines) > 20 {
		t.Errorf("%d lines for a 20-line window", len(lines))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line %d wide: %q", w, l)
		}
	}
	for _, want := range []string{"30 of 40 labs open", "user02", "LA··H", "1m30s", "… and ", `evil\x1b]0;p`, `ana\u202eTXT`,
		"toggles: L leasing, A atomic claim, O ownership check, F fencing"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in:\n%s", want, v)
		}
	}
	if strings.Contains(v, "\x1b]") || strings.Contains(v, "\u202e") {
		t.Error("a user name's escape sequence or bidi override reached the screen")
	}
}

// TestPrintableLog escapes control characters, bidi overrides and line feeds in log lines,
// keeping the line's own newline.
func TestPrintableLog(t *testing.T) {
	var b bytes.Buffer
	p := printable{&b}
	in := "user \x1b[2J\u009b\u202e\nforged here\n"
	n, err := p.Write([]byte(in))
	if err != nil || n != len(in) || b.String() != `user \x1b[2J\u009b\u202e\x0aforged here`+"\n" {
		t.Fatalf("wrote %q (%d, %v)", b.String(), n, err)
	}
}

// The table's toggles come from the lab's settings: "-" before it read any, skip-locked's S on a
// database with row locks (and in the legend then), never on SQLite.
func TestTeacherToggleLetters(t *testing.T) {
	if got := toggleLetters(ui.LabStatus{}); got != "-" {
		t.Errorf("no frame yet: letters %q, want -", got)
	}
	skip := slices.Index(engine.AllToggleNames(), engine.ToggleSkipLocked)
	s := engine.DefaultSettings()
	for _, tc := range []struct {
		st   ui.LabStatus
		n    int    // letters
		skip string // skip-locked's, "" for none
	}{
		{ui.LabStatus{Framed: true, Settings: s}, len(engine.ToggleNames()), ""},
		{ui.LabStatus{Framed: true, Settings: s, RowLocks: true}, len(engine.AllToggleNames()), "S"},
		{ui.LabStatus{Framed: true, Settings: engine.Settings{Leasing: true, AtomicClaim: true, OwnershipCheck: true}, RowLocks: true}, len(engine.AllToggleNames()), "·"},
	} {
		got := []rune(toggleLetters(tc.st))
		if !strings.HasPrefix(string(got), "LAO··") || len(got) != tc.n {
			t.Errorf("%+v: letters %q, want LAO·· and %d in all", tc.st, string(got), tc.n)
			continue
		}
		if tc.skip != "" && string(got[skip]) != tc.skip {
			t.Errorf("%+v: letters %q, want skip-locked's %s", tc.st, string(got), tc.skip)
		}
		if tc.skip == "" && strings.Contains(string(got), "S") {
			t.Errorf("SQLite: letters %q name skip-locked", string(got))
		}
	}
	sqlite, pg := Info{Status: ui.LabStatus{Framed: true}}, Info{Status: ui.LabStatus{Framed: true, RowLocks: true}}
	const every = "toggles: L leasing, A atomic claim, O ownership check, F fencing, H heartbeat"
	if got := toggleLegend([]Info{sqlite}); !strings.HasPrefix(got, every) || strings.Contains(got, "skip") {
		t.Errorf("SQLite labs: legend %q", got)
	}
	if got := toggleLegend([]Info{sqlite, pg}); !strings.HasPrefix(got, every) || !strings.Contains(got, ", S skip-locked") || !strings.HasSuffix(got, " (· off)") {
		t.Errorf("a PostgreSQL lab: legend %q", got)
	}
}
