package ui

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"leaselab/engine"
	"leaselab/store"
	"leaselab/ui/common"
)

// screenshotDir holds the README's pictures, their plain-text screens and the keys that make
// them (shots).
const screenshotDir = "../assets/screenshots"

// screenshotDB is the database path the screenshots show (make.sh runs the lab with it).
const screenshotDB = "/tmp/workshop.db"

// shot is one line of assets/screenshots/shots.
type shot struct {
	name          string
	width, height int
	flags         []string // the lab's flags before the keys: --theme=NAME
	keys          []string
}

// readShots reads assets/screenshots/shots: NAME SIZE [--FLAG=VALUE…] KEYS…, # comments.
func readShots(t *testing.T) []shot {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(screenshotDir, "shots"))
	if err != nil {
		t.Fatal(err)
	}
	var shots []shot
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		ws, hs, ok := strings.Cut(f[1], "x")
		w, err1 := strconv.Atoi(ws)
		h, err2 := strconv.Atoi(hs)
		if len(f) < 2 || !ok || err1 != nil || err2 != nil {
			t.Fatalf("shots:%d: want NAME WIDTHxHEIGHT KEYS…, got %q", i+1, line)
		}
		rest := f[2:]
		var flags []string
		for len(rest) > 0 && strings.HasPrefix(rest[0], "--") {
			flags, rest = append(flags, rest[0]), rest[1:]
		}
		shots = append(shots, shot{f[0], w, h, flags, rest})
	}
	return shots
}

// TestScreenshotsAreTheProgram presses each screenshot's keys in a lab of its size and fails
// unless the screen is the .txt that make.sh captured from the real program in tmux: a change
// of the screen must remake the pictures (assets/screenshots/make.sh).
func TestScreenshotsAreTheProgram(t *testing.T) {
	shots := readShots(t)
	if len(shots) == 0 {
		t.Fatal("no screenshots in shots")
	}
	for _, s := range shots {
		t.Run(s.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(screenshotDir, s.name+".txt"))
			if err != nil {
				t.Fatalf("%v (assets/screenshots/make.sh makes it)", err)
			}
			if _, err := os.Stat(filepath.Join(screenshotDir, s.name+".png")); err != nil {
				t.Fatalf("%v (assets/screenshots/make.sh makes it)", err)
			}
			l := newLabShowing(t, screenshotDB, s.width, s.height)
			for _, fl := range s.flags {
				name, ok := strings.CutPrefix(fl, "--theme=")
				if !ok {
					t.Fatalf("shots: %s: the only flag a screenshot takes is --theme=NAME", fl)
				}
				st, err := common.Theme(name, lipgloss.DefaultRenderer())
				if err != nil {
					t.Fatalf("shots: %s: %v", fl, err)
				}
				l.m.styles = st
			}
			l.press(s.keys...)
			want := trimLines(string(data), s.height)
			got := trimLines(l.view(), s.height)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s.txt line %d is not what the program draws now (remake the screenshots: assets/screenshots/make.sh)\nwant %q\ngot  %q\nscreen now:\n%s",
						s.name, i+1, want[i], got[i], strings.Join(got, "\n"))
				}
			}
		})
	}
}

// trimLines is s as h lines without trailing blanks, as tmux's capture-pane writes a screen.
func trimLines(s string, h int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	out := make([]string, h)
	for i := 0; i < h && i < len(lines); i++ {
		out[i] = strings.TrimRight(lines[i], " ")
	}
	return out
}

// pathDB is a store.DB that reports the path a screenshot shows.
type pathDB struct {
	*store.DB
	shown string
}

func (p pathDB) Path() string { return p.shown }

// newLabShowing is newLab on the playground, its database reported as shown, as the lab of
// make.sh shows its --db file.
func newLabShowing(tb testing.TB, shown string, w, h int) *lab {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "lab.db")
	open := openerOn(tb, engine.Overrides{}, func(ctx context.Context) (engine.DB, func() error, error) {
		db, err := store.Create(ctx, path)
		if err != nil {
			return nil, nil, err
		}
		return pathDB{db, shown}, db.Close, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	cfg := Config{Start: "playground", Scenarios: sqliteLessons(), Open: open}
	l := &lab{tb: tb, m: New(ctx, cfg, common.DefaultStyles(lipgloss.DefaultRenderer()))}
	runner := l.m.runner
	tb.Cleanup(func() { _ = runner.stop() })
	l.m.after = atOnce
	l.send(tea.WindowSizeMsg{Width: w, Height: h})
	l.run(l.m.Init())
	return l
}
