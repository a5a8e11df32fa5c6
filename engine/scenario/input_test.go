package scenario_test

import (
	"errors"
	"fmt"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"strings"
	"testing"
	"time"
)

// parseErr parses text and returns its ParseError, failing when it parses.
func parseErr(t *testing.T, text string) *scenario.ParseError {
	t.Helper()
	_, err := scenario.Parse("h.scenario", []byte(text))
	var pe *scenario.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("Parse(%q) = %v, want a ParseError", text, err)
	}
	return pe
}

// A BOM, CRLF and CR-only line ends read as the LF file does, line numbers included.
func TestParseLineEndingsAndBOM(t *testing.T) {
	ref, err := scenario.Parse("lf.scenario", []byte(lfScenario))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"bom":      "\uFEFF" + lfScenario,
		"crlf":     strings.ReplaceAll(lfScenario, "\n", "\r\n"),
		"cr":       strings.ReplaceAll(lfScenario, "\n", "\r"),
		"bom+crlf": "\uFEFF" + strings.ReplaceAll(lfScenario, "\n", "\r\n"),
	} {
		sc, err := scenario.Parse(name, []byte(text))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if sc.Name != ref.Name || sc.Title != ref.Title || strings.Join(sc.Explain, "|") != "one|two" ||
			len(sc.Steps) != 2 || sc.Steps[1].Line != ref.Steps[1].Line || sc.Expect[0].Items[0].Line != 10 {
			t.Errorf("%s: read as %q %q %q, steps %+v", name, sc.Name, sc.Title, sc.Explain, sc.Steps)
		}
	}
	// A CR-only file's errors name the right line.
	pe := parseErr(t, "name: x\rmessages: lots\r")
	if pe.Line != 2 {
		t.Errorf("CR-only error at line %d, want 2: %v", pe.Line, pe)
	}
}

// Control characters are refused in every text field, with the line and the character.
func TestParseRefusesControlCharacters(t *testing.T) {
	for _, c := range []struct{ line, char string }{
		{"title: Hi \x1b]0;owned\x07", "ESC (U+001B)"},
		{"explain: ring \x07 the bell", "BEL (U+0007)"},
		{"verdict-pass: ok\x00", "NUL (U+0000)"},
		{"verdict-fail: \u009b2J", "CSI (U+009B)"},
		{"worker: A2 id=Worker-\x1b[2JA", "ESC (U+001B)"},
		{"title: right\u202eto left", "U+202E"},
		{"title: back\x08space", "BS (U+0008)"},
		{"title: del\x7f", "DEL (U+007F)"},
	} {
		pe := parseErr(t, "name: x\nworkers: A\n"+c.line+"\n")
		if pe.Line != 3 || !strings.Contains(pe.Msg, "control character "+c.char) {
			t.Errorf("%q: %v, want line 3 naming %s", c.line, pe, c.char)
		}
		if strings.ContainsAny(pe.Error(), "\x1b\x07\x00\u009b\u202e\x08\x7f") {
			t.Errorf("%q: the error itself carries the character: %q", c.line, pe.Error())
		}
	}
	// A tab is text.
	if _, err := scenario.Parse("t", []byte("name: x\ntitle: a\tb\n")); err != nil {
		t.Errorf("tab refused: %v", err)
	}
}

// One lease range for files, set steps and flags; the heartbeat rule only when it matters.
func TestOneLeaseRange(t *testing.T) {
	for _, c := range []struct {
		d  time.Duration
		ok bool
	}{{time.Millisecond, true}, {24 * time.Hour, true}, {500 * time.Millisecond, true},
		{0, false}, {-time.Second, false}, {2500 * time.Microsecond, false}, {999999 * time.Hour, false}, {24*time.Hour + time.Millisecond, false}} {
		if err := engine.CheckLease(c.d); (err == nil) != c.ok {
			t.Errorf("CheckLease(%s) = %v, want ok=%v", c.d, err, c.ok)
		}
		// The file, a set step and the flag agree.
		text := fmt.Sprintf("name: x\nlease: %s\n", c.d)
		_, ferr := scenario.Parse("l", []byte(text))
		_, serr := scenario.Parse("l", []byte(fmt.Sprintf("name: x\nsteps:\n  set lease %s\n", c.d)))
		sc := mustParse(t, "name: x\n")
		aerr := sc.Apply(engine.Overrides{Lease: c.d})
		if c.d == 0 {
			aerr = errors.New("0 means: as declared") // Overrides treats 0 as unset; flags.go refuses it
		}
		if (ferr == nil) != c.ok || (serr == nil) != c.ok || (aerr == nil) != c.ok {
			t.Errorf("lease %s: file %v, set %v, flag %v; want ok=%v", c.d, ferr, serr, aerr, c.ok)
		}
	}
	// lease: 1ms without a heartbeat is a lease, not a heartbeat error.
	sc := mustParse(t, "name: x\nlease: 1ms\n")
	if sc.Settings.Lease != time.Millisecond {
		t.Fatalf("lease %s", sc.Settings.Lease)
	}
	// With the heartbeat on it leaves no room, and the error says so at the lease line.
	pe := parseErr(t, "name: x\nlease: 1ms\nheartbeat: on\n")
	if pe.Line != 3 || !strings.Contains(pe.Msg, "leaves no room for the heartbeat") {
		t.Errorf("1ms with heartbeat: %v", pe)
	}
	// A heartbeat-every the file wrote is checked against the lease it wrote.
	pe = parseErr(t, "name: x\nlease: 500ms\nheartbeat-every: 600ms\n")
	if pe.Line != 3 || !strings.Contains(pe.Msg, "heartbeat-every (600ms)") {
		t.Errorf("heartbeat-every 600ms: %v", pe)
	}
	// --heartbeat=true on a 1ms lease is refused by Apply; on 2ms it fits a 1ms heartbeat.
	sc = mustParse(t, "name: x\nlease: 1ms\n")
	if err := sc.Apply(engine.Overrides{Toggles: map[string]bool{engine.ToggleHeartbeat: true}}); err == nil {
		t.Error("--heartbeat on a 1ms lease accepted")
	}
	sc = mustParse(t, "name: x\nlease: 2ms\n")
	if err := sc.Apply(engine.Overrides{Toggles: map[string]bool{engine.ToggleHeartbeat: true}}); err != nil || sc.Settings.HeartbeatEvery != time.Millisecond {
		t.Errorf("--heartbeat on 2ms: %v, every %s", err, sc.Settings.HeartbeatEvery)
	}
}

// What a script may ask for is bounded before it runs.
func TestParseBoundsTheWork(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: big\nsteps:\n")
	for i := 0; i < 3900; i++ {
		b.WriteString("  A step 100000\n")
	}
	if b.Len() > scenario.MaxScenarioSize {
		t.Fatalf("test file of %d bytes is over the size limit", b.Len())
	}
	pe := parseErr(t, b.String())
	if pe.Line != 4 || !strings.Contains(pe.Msg, "200000 worker actions") {
		t.Errorf("3,900 × A step 100000: %v", pe)
	}
	if _, err := scenario.Parse("ok", []byte("name: x\nsteps:\n  A step 60000\n  B step 40000\n")); err != nil {
		t.Errorf("100,000 actions in all refused: %v", err)
	}
	for text, want := range map[string]string{
		"name: x\nsteps:\n  A step 100001\n":                                 "bad count",
		"name: x\nmessages: 100001\n":                                        "want a whole number from 1 to 100000",
		"name: x\nmessages: 4000\nworkers: 51\n":                             "4000 messages × 51 workers = 204000 worker-messages",
		"name: x\nsteps:\n  run crash-rate=0.5 pause-rate=0.5\n":             "crash-rate + pause-rate is 1",
		"name: x\nsteps:\n  run random crash-rate=0.3 pause-rate=0.3\n":      "more than 0.5",
		"name: x\nsteps:\n  run crash-rate=NaN\n":                            "bad crash-rate",
		"name: x\nsteps:\n  run pause-rate=0.6\n":                            "bad pause-rate",
		"name: x\nworker: A id=" + strings.Repeat("W", 65) + "\n":            "longer than 64 bytes",
		"name: x\nsteps:\n  set lease 2500us\n":                              "finer than a millisecond",
		"name: x\nsteps:\n  set lease 25h\n":                                 "out of range",
		"name: x\nsteps:\n  run until-done crash-rate=0.25 pause-rate=0.3\n": "more than 0.5",
	} {
		if pe := parseErr(t, text); !strings.Contains(pe.Msg, want) {
			t.Errorf("%q: %v, want %q", text, pe, want)
		}
	}
	if _, err := scenario.Parse("ok", []byte("name: x\nsteps:\n  run random crash-rate=0.25 pause-rate=0.25\n")); err != nil {
		t.Errorf("rates summing to 0.5 refused: %v", err)
	}
}

// The scenario keys of the skip-locked lesson, and their errors with file:line.
func TestParseRowLockKeys(t *testing.T) {
	sc, err := scenario.Parse("x.scenario", []byte("name: x\nmessages: 1\nworkers: A\nbackend: postgres\nskip-locked: off\nlock-timeout: 250ms\nsteps:\n  A lock\n  A step\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Backend != engine.BackendPostgres || sc.Settings.SkipLocked || sc.Settings.LockTimeout != 250*time.Millisecond || sc.Steps[0].Action != engine.ActLock {
		t.Fatalf("parsed %+v %+v", sc.Settings, sc.Steps[0])
	}
	if !strings.Contains(sc.Settings.Describe(), "skip-locked=off lock-timeout=250ms") {
		t.Fatalf("describe: %s", sc.Settings.Describe())
	}
	for _, c := range []struct{ line, want string }{
		{"backend: mysql", "x.scenario:4: bad backend \"mysql\""},
		{"lock-timeout: 0s", "x.scenario:4: bad duration for lock-timeout: want at least 1ms"},
		{"skip-locked: maybe", "x.scenario:4: bad skip-locked"},
	} {
		_, err := scenario.Parse("x.scenario", []byte("name: x\nmessages: 1\nworkers: A\n"+c.line+"\nsteps:\n  A step\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.line, err, c.want)
		}
	}
}

// mustParse parses text, failing the test when it does not parse.
func mustParse(t *testing.T, text string) *engine.Scenario {
	t.Helper()
	sc, err := scenario.Parse("test.scenario", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

const lfScenario = "name: ends\ntitle: Line ends\nexplain: one\nexplain: two\nmessages: 2\nsteps:\n  A claim\n  run\nexpect:\n  outbox.processed = 2\n"
