package ui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/pace"
)

// offerLab drives the served lab's model synchronously, as the lab harness does.
type offerLab struct {
	t       *testing.T
	m       tea.Model
	reports []LabStatus
}

func newOfferLab(t *testing.T) *offerLab {
	ol := &offerLab{t: t}
	cfg := Config{Start: "playground", Scenarios: sqliteLessons(), Open: opener(t, engine.Overrides{}),
		Report: func(s LabStatus) { ol.reports = append(ol.reports, s) }}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := New(ctx, cfg, common.DefaultStyles(lipgloss.DefaultRenderer()))
	ol.m = offering{Model: m, report: cfg.Report}
	ol.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	ol.run(ol.m.Init())
	return ol
}

func (ol *offerLab) send(msg tea.Msg) {
	var cmd tea.Cmd
	ol.m, cmd = ol.m.Update(msg)
	ol.run(cmd)
}

func (ol *offerLab) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil, pace.TickMsg, pollMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			ol.run(c)
		}
	default:
		ol.send(msg)
	}
}

func (ol *offerLab) key(k string) {
	if k == " " {
		ol.send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
		return
	}
	ol.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
}

func (ol *offerLab) last() LabStatus { return ol.reports[len(ol.reports)-1] }

// TestOfferNeverForced: an offer shows in the status line and waits; stepping goes on in the
// scenario open; O opens the offered one. Each change is reported once.
func TestOfferNeverForced(t *testing.T) {
	ol := newOfferLab(t)
	if st := ol.last(); st.Scenario != "playground" || st.Steps != 0 || !st.Framed || !st.Settings.Leasing || st.Verdict == "" {
		t.Fatalf("opened: %+v", st)
	}
	ol.key(" ")
	if st := ol.last(); st.Steps != 1 {
		t.Fatalf("after a step: %+v", st)
	}
	ol.send(OfferMsg{Scenario: "no-such", From: "teacher"})
	ol.send(OfferMsg{Scenario: "after", From: "the teacher"})
	if v := ol.m.View(); !strings.Contains(v, "the teacher offers the scenario after: press O") {
		t.Fatalf("no offer on the screen:\n%s", v)
	}
	if st := ol.last(); st.Scenario != "playground" || st.Offer != "after" || st.Steps != 1 {
		t.Fatalf("offered: %+v", st)
	}
	ol.key(" ")
	if st := ol.last(); st.Scenario != "playground" || st.Steps != 2 {
		t.Fatalf("stepping with an offer waiting: %+v", st)
	}
	n := len(ol.reports)
	ol.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	if len(ol.reports) != n {
		t.Errorf("a resize changed nothing but reported %d times", len(ol.reports)-n)
	}
	ol.key("O")
	if st := ol.last(); st.Scenario != "after" || st.Steps != 0 || st.Offer != "" {
		t.Fatalf("after O: %+v", st)
	}
	if v := ol.m.View(); !strings.Contains(v, "AFTER") {
		t.Fatalf("after O the screen does not show the after scenario:\n%s", v)
	}
	ol.key("O") // no offer waiting: O does nothing
	if st := ol.last(); st.Scenario != "after" || st.Quit {
		t.Fatalf("a second O: %+v", st)
	}
	ol.key("q")
	if st := ol.last(); !st.Quit {
		t.Fatalf("after q: %+v", st)
	}
}
