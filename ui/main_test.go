package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/store"
	"leaselab/ui/common"
	"leaselab/ui/pace"
)

func TestMain(m *testing.M) {
	// Goldens and string checks need the same output in a terminal and in CI.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// shownPath is the database path the test sessions report, so that goldens hold no temp path.
const shownPath = "/tmp/leaselab/lab.db"

// fixedPathDB is a store.DB that reports shownPath as its path.
type fixedPathDB struct{ *store.DB }

func (fixedPathDB) Path() string { return shownPath }

// opener returns a Config.Open that works as main's does: a fresh session on a reset database
// file, closing the previous one. Overrides apply to every scenario it opens.
func opener(tb testing.TB, o engine.Overrides) func(ctx context.Context, name string) (*engine.Session, error) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "lab.db")
	return openerOn(tb, o, func(ctx context.Context) (engine.DB, func() error, error) {
		db, err := store.Create(ctx, path)
		if err != nil {
			return nil, nil, err
		}
		return fixedPathDB{db}, db.Close, nil
	})
}

// openerOn is opener on the databases newDB makes (and closes with the func it returns).
func openerOn(tb testing.TB, o engine.Overrides, newDB func(context.Context) (engine.DB, func() error, error)) func(ctx context.Context, name string) (*engine.Session, error) {
	tb.Helper()
	var closeAll func()
	tb.Cleanup(func() {
		if closeAll != nil {
			closeAll()
		}
	})
	return func(ctx context.Context, name string) (*engine.Session, error) {
		if closeAll != nil {
			closeAll()
			closeAll = nil
		}
		sc, err := loadScenario(name, o)
		if err != nil {
			return nil, err
		}
		db, closeDB, err := newDB(ctx)
		if err != nil {
			return nil, err
		}
		s, err := engine.NewSession(ctx, sc, db)
		if err != nil {
			closeDB()
			return nil, err
		}
		closeAll = func() { s.Close(); closeDB() }
		return s, nil
	}
}

// lab drives a Model as Bubble Tea would, but synchronously: every Cmd runs at once and its
// message goes back into Update. Ticks (auto-play's and the free run's polls) are held until the
// test delivers them. Free-running workers run on their own goroutines meanwhile.
type lab struct {
	tb    testing.TB
	m     Model
	ticks []pace.TickMsg
	polls []pollMsg
	quit  bool
	msgs  int
}

// newLab opens start at w×h (0×0: no WindowSizeMsg) with the given overrides.
func newLab(tb testing.TB, start string, w, h int, o engine.Overrides) *lab {
	tb.Helper()
	return newLabOn(tb, start, w, h, Config{Scenarios: sqliteLessons(), Open: opener(tb, o)})
}

// newLabOn is newLab with cfg's lessons and opener (another database).
func newLabOn(tb testing.TB, start string, w, h int, cfg Config) *lab {
	tb.Helper()
	cfg.Start = start
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	l := &lab{tb: tb, m: New(ctx, cfg, common.DefaultStyles(lipgloss.DefaultRenderer()))}
	// Cleanups run last first: the workers stop before the opener closes their session.
	runner := l.m.runner
	tb.Cleanup(func() { _ = runner.stop() })
	l.m.after = atOnce
	sized(w, h, l.send)
	l.run(l.m.Init())
	return l
}

// sized sends a test model its window size, unless w and h are 0 (no WindowSizeMsg yet).
func sized(w, h int, send func(tea.Msg)) {
	if w > 0 || h > 0 {
		send(tea.WindowSizeMsg{Width: w, Height: h})
	}
}

// updated feeds msg to *m's update and returns the command it returns.
func updated[M any](m *M, msg tea.Msg, update func(M, tea.Msg) (M, tea.Cmd)) tea.Cmd {
	var cmd tea.Cmd
	*m, cmd = update(*m, msg)
	return cmd
}

// send feeds msg to Update and runs what it returns.
func (l *lab) send(msg tea.Msg) {
	l.tb.Helper()
	l.run(updated(&l.m, msg, Model.update))
}

// run executes cmd and everything that follows from it.
func (l *lab) run(cmd tea.Cmd) {
	l.tb.Helper()
	runCmd(cmd, func(msg tea.Msg) {
		if l.msgs++; l.msgs > 100_000 {
			l.tb.Fatal("runaway: more than 100000 messages")
		}
		switch msg := msg.(type) {
		case tea.QuitMsg:
			l.quit = true
		case pace.TickMsg:
			l.ticks = append(l.ticks, msg)
		case pollMsg:
			l.polls = append(l.polls, msg)
		default:
			l.send(msg)
		}
	})
}

// runCmd runs cmd as Bubble Tea would, but at once: the commands of a batch in turn, and each
// message but nil to deliver (which a test model's driver sends back into Update, or holds).
func runCmd(cmd tea.Cmd, deliver func(tea.Msg)) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			runCmd(c, deliver)
		}
	default:
		deliver(msg)
	}
}

// press sends keys by name: "n", " ", "tab", "ctrl+c", "up", or a word of runes sent as one
// message when it starts with "runes:".
func (l *lab) press(keys ...string) {
	l.tb.Helper()
	for _, k := range keys {
		l.send(keyMsg(k))
	}
}

// keyStep is one step of a key script: the keys pressed, then what the screen must show and
// what it must not.
type keyStep struct{ keys, want, not []string }

// script presses each step's keys in turn and holds the screen after each to its step.
func (l *lab) script(steps ...keyStep) {
	l.tb.Helper()
	for _, st := range steps {
		l.press(st.keys...)
		l.must(st.want...)
		l.mustNot(st.not...)
	}
}

// keyMsg builds the KeyMsg a terminal sends for k.
func keyMsg(k string) tea.KeyMsg {
	named := map[string]tea.KeyType{
		" ": tea.KeySpace, "tab": tea.KeyTab, "ctrl+c": tea.KeyCtrlC, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
		"home": tea.KeyHome, "end": tea.KeyEnd, "esc": tea.KeyEsc,
	}
	if t, ok := named[k]; ok {
		if t == tea.KeySpace {
			return tea.KeyMsg{Type: t, Runes: []rune{' '}}
		}
		return tea.KeyMsg{Type: t}
	}
	if r, ok := strings.CutPrefix(k, "runes:"); ok {
		return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(r)}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// tickAll delivers held ticks until none is left (auto-play stopped) or n were delivered.
func (l *lab) tickAll(n int) int {
	l.tb.Helper()
	done := 0
	for len(l.ticks) > 0 && done < n {
		t := l.ticks[0]
		l.ticks = l.ticks[1:]
		l.send(t)
		done++
	}
	return done
}

// view is the screen.
func (l *lab) view() string { return l.m.View() }

// row returns the screen line that shows key (the outbox row), or fails.
func (l *lab) row(key string) string {
	l.tb.Helper()
	for _, line := range strings.Split(l.view(), "\n") {
		if strings.Contains(line, " "+key+" ") && strings.Contains(line, "Pending") || strings.Contains(line, " "+key+" ") && (strings.Contains(line, "Processing") || strings.Contains(line, "Processed")) {
			return line
		}
	}
	l.tb.Fatalf("no row for %s on screen:\n%s", key, l.view())
	return ""
}

// must fails unless the screen contains every one of want.
func (l *lab) must(want ...string) {
	l.tb.Helper()
	v := l.view()
	for _, w := range want {
		if !strings.Contains(v, w) {
			l.tb.Fatalf("screen lacks %q:\n%s", w, v)
		}
	}
}

// mustNot fails if the screen contains any of bad.
func (l *lab) mustNot(bad ...string) {
	l.tb.Helper()
	v := l.view()
	for _, b := range bad {
		if strings.Contains(v, b) {
			l.tb.Fatalf("screen shows %q:\n%s", b, v)
		}
	}
}

func windowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// sqliteLessons are the built-in scenarios a SQLite file can run, in tab order (main's
// lessonsFor): every one but those that need PostgreSQL.
func sqliteLessons() []string {
	var out []string
	for _, n := range assets.Names() {
		data, src, _ := assets.Scenario(n)
		if sc, err := scenario.Parse(src, data); err == nil && sc.Backend == "" {
			out = append(out, n)
		}
	}
	return out
}

// atOnce is a model's after for the tests: the message is due at once (the driver holds the
// ticks the test delivers itself).
func atOnce(_ time.Duration, msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// loadScenario reads and parses scenario name (built in, or a file) with the overrides o.
func loadScenario(name string, o engine.Overrides) (*engine.Scenario, error) {
	data, source, err := assets.Load(name, scenario.MaxScenarioSize)
	if err != nil {
		return nil, err
	}
	sc, err := scenario.Parse(source, data)
	if err != nil {
		return nil, err
	}
	return sc, sc.Apply(o)
}
