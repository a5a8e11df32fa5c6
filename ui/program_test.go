package ui

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"leaselab/engine"
	"leaselab/store"
	"leaselab/ui/pace"
)

// screen is a terminal for a Program under test: keys go in through a pipe, the output is kept.
type screen struct {
	inR *io.PipeReader
	inW *io.PipeWriter
	mu  sync.Mutex
	out bytes.Buffer
}

func newScreen(t *testing.T) *screen {
	s := &screen{}
	s.inR, s.inW = io.Pipe()
	t.Cleanup(func() { s.inW.Close() })
	return s
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// waitFor waits up to 10 s for the output to contain want.
func (s *screen) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.text(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the screen after 10s; it shows:\n%q", want, tail(s.text(), 2000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *screen) keys(t *testing.T, k string) {
	t.Helper()
	if _, err := io.WriteString(s.inW, k); err != nil {
		t.Fatal(err)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// startLab builds the lab on a screen with renderer r (nil: the terminal's default) at w×h, and
// runs it; done receives Run's error.
func startLab(t *testing.T, r *lipgloss.Renderer, w, h int) (*Program, *screen, <-chan error) {
	t.Helper()
	sc := newScreen(t)
	cfg := Config{Start: "playground", Scenarios: sqliteLessons(), Open: opener(t, engine.Overrides{}), MinPace: 10 * time.Millisecond}
	p, err := NewLab(context.Background(), cfg, Terminal{In: sc.inR, Out: sc, Renderer: r, Width: w, Height: h})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run() }()
	t.Cleanup(p.Close)
	return p, sc, done
}

func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the program did not end within 10s")
		return nil
	}
}

// TestProgramsOwnRenderers runs two labs at once, one with a 256-colour renderer and one with an
// ASCII one: each draws with its own profile, as two SSH sessions must.
func TestProgramsOwnRenderers(t *testing.T) {
	colour, plain := lipgloss.NewRenderer(io.Discard), lipgloss.NewRenderer(io.Discard)
	colour.SetColorProfile(termenv.ANSI256)
	plain.SetColorProfile(termenv.Ascii)
	p1, s1, d1 := startLab(t, colour, 120, 40)
	p2, s2, d2 := startLab(t, plain, 120, 40)
	s1.waitFor(t, "PAY-006")
	s2.waitFor(t, "PAY-006")
	if !strings.Contains(s1.text(), "\x1b[38;5;") {
		t.Errorf("the 256-colour lab drew no 256-colour foreground")
	}
	if strings.Contains(s2.text(), "\x1b[38;5;") || strings.Contains(s2.text(), "\x1b[1m") {
		t.Errorf("the ASCII lab drew colour or bold")
	}
	s1.keys(t, "q")
	if err := wait(t, d1); err != nil {
		t.Fatalf("q: Run returned %v", err)
	}
	p1.Close()
	p2.Close()
	if err := wait(t, d2); err != nil {
		t.Fatalf("Close: Run returned %v", err)
	}
}

// TestProgramCloseStopsFreeRun closes a lab from outside while its workers free-run, as a
// server does when a connection drops: the program ends, no worker runs, no command is admitted.
func TestProgramCloseStopsFreeRun(t *testing.T) {
	p, sc, done := startLab(t, nil, 120, 40)
	sc.waitFor(t, "PAY-006")
	sc.keys(t, "g")
	// The badge shows at the key; the workers start in the command after it, which says so.
	sc.waitFor(t, "every worker on its own goroutine")
	if !p.runner.running() {
		t.Fatal("g: no free run")
	}
	p.Close()
	if err := wait(t, done); err != nil {
		t.Fatalf("Run after Close: %v", err)
	}
	if p.runner.running() {
		t.Error("Close left the workers free-running")
	}
	if p.gate.enter() {
		t.Error("Close left the gate open")
	}
	p.Close() // twice is harmless
}

// TestProgramInitialSize draws the first frame at the size the terminal gave at start, before
// any WindowSizeMsg (an SSH pty's size is known when the session opens).
func TestProgramInitialSize(t *testing.T) {
	p, sc, done := startLab(t, nil, 60, 20)
	sc.waitFor(t, "terminal too small (need 80×24, have 60×20)")
	p.Close()
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
}

// TestWatchProgram runs the watch through the same runner, on a real database.
func TestWatchProgram(t *testing.T) {
	db, err := store.Create(context.Background(), filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sc := newScreen(t)
	p, err := NewWatch(context.Background(), WatchConfig{DB: db, Path: db.Path()}, Terminal{In: sc.inR, Out: sc, Width: 100, Height: 30})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run() }()
	sc.waitFor(t, "WATCH (read-only)")
	sc.keys(t, "q")
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	if _, err := NewWatch(context.Background(), WatchConfig{}, Terminal{}); err == nil {
		t.Error("NewWatch without a database: no error")
	}
	if _, err := NewLab(context.Background(), Config{}, Terminal{}); err == nil {
		t.Error("NewLab without Open: no error")
	}
}

// TestFreeModeFloor keeps the paces no faster than the floor, and the pace chosen when it is kept.
func TestFreeModeFloor(t *testing.T) {
	for _, tc := range []struct {
		min  time.Duration
		want []time.Duration
		pace time.Duration
	}{
		{0, []time.Duration{5 * time.Second, 2 * time.Second, time.Second, 500 * time.Millisecond, 200 * time.Millisecond,
			100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond, 0}, 100 * time.Millisecond},
		{10 * time.Millisecond, []time.Duration{5 * time.Second, 2 * time.Second, time.Second, 500 * time.Millisecond,
			200 * time.Millisecond, 100 * time.Millisecond, 10 * time.Millisecond}, 100 * time.Millisecond},
		{500 * time.Millisecond, []time.Duration{5 * time.Second, 2 * time.Second, time.Second, 500 * time.Millisecond}, 500 * time.Millisecond},
		{5 * time.Second, []time.Duration{5 * time.Second}, 5 * time.Second},
	} {
		f := pace.NewFree().Floor(tc.min)
		if !equalDurations(f.Paces(), tc.want) || f.Interval() != tc.pace {
			t.Errorf("floor %s: paces %v at %s, want %v at %s", tc.min, f.Paces(), f.Interval(), tc.want, tc.pace)
		}
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
