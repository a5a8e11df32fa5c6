package ui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"leaselab/engine"
	"leaselab/store"
	"leaselab/ui/common"
)

// A LockedBy that another process wrote full of terminal escapes is shown escaped by the watch,
// in the table and in "who holds what": the screen never carries the raw ESC or BEL.
func TestWatchShowsForeignLockedByEscaped(t *testing.T) {
	s := newShared(t, 3)
	s.claim("Ev\x1b]0;x\x07", watchT0, 2*time.Second) // written by SQLite, as any process could
	w := newWatcher(t, s.db, 120, 40)
	v := w.m.View()
	if strings.ContainsAny(v, "\x1b\x07") {
		t.Fatalf("raw control characters on the watch screen:\n%q", v)
	}
	if strings.Count(v, `Ev\x1b]0;x\x07`) < 2 {
		t.Fatalf("the escaped LockedBy is not in the table and the holders:\n%s", v)
	}
}

// The lab shows a LockedBy the database holds escaped, in the table, the worker lines and the
// event log (here a worker whose id carries ESC and BEL writes it, as a foreign process could).
func TestLabShowsForeignLockedByEscaped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lab.db")
	var closeAll func()
	t.Cleanup(func() {
		if closeAll != nil {
			closeAll()
		}
	})
	open := func(ctx context.Context, name string) (*engine.Session, error) {
		sc := &engine.Scenario{Name: "hostile", Title: "hostile", Source: "hostile", Messages: 2,
			Settings: engine.DefaultSettings(), Pass: "pass", Failure: "fail",
			Workers: []engine.WorkerSpec{{Short: "A", ID: "Ev\x1b[2J\x07"}}}
		db, err := store.Create(ctx, path)
		if err != nil {
			return nil, err
		}
		s, err := engine.NewSession(ctx, sc, fixedPathDB{db})
		if err != nil {
			db.Close()
			return nil, err
		}
		closeAll = func() { s.Close(); db.Close() }
		return s, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := &lab{tb: t, m: New(ctx, Config{Start: "hostile", Scenarios: []string{"hostile"}, Open: open}, common.DefaultStyles(lipgloss.DefaultRenderer()))}
	l.m.after = atOnce
	l.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	l.run(l.m.Init())
	l.press("n") // Worker-A claims PAY-001: LockedBy = its id
	v := l.view()
	if strings.ContainsAny(v, "\x1b\x07") {
		t.Fatalf("raw control characters on the lab screen:\n%q", v)
	}
	if !strings.Contains(v, `Ev\x1b[2J\x07`) {
		t.Fatalf("the escaped LockedBy is not shown:\n%s", v)
	}
}
