package scenario_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/engine/words"
)

// Every built-in scenario parses.
func TestBuiltInScenariosParse(t *testing.T) {
	names := assets.Names()
	if len(names) < 8 {
		t.Fatalf("built-in scenarios: %v", names)
	}
	for _, n := range names {
		data, src, _ := assets.Scenario(n)
		sc, err := scenario.Parse(src, data)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if sc.Name != n || len(sc.Explain) == 0 {
			t.Errorf("%s: name %q, %d explain lines", n, sc.Name, len(sc.Explain))
		}
	}
}

func TestParseReadsEverything(t *testing.T) {
	src := `# a comment
name: demo
title: Demo # with a hash kept
explain: line one
explain: line two
messages: 3
workers: A B
worker: A2 id=Worker-A
slow: A 800ms
lease: 250ms
heartbeat-every: 100ms
provider-latency: 50ms
leasing: off
fencing: on
fail: PAY-002
seed: 9
teaches: fencing

steps:
  phase Start
  A claim PAY-001   # trailing comment
  A2 step 3
  clock +600ms
  clock 09:00:01.000Z
  clock past-lease
  set heartbeat on
  set lease 300ms
  run random until-done crash-rate=0.1 crash-at=claim pause-rate=0.05 A B
  concurrent A B
  B crash
  note Done.

expect:
  processing_attempts >= 3
expect when fencing=off leasing=on:
  status_checks[PAY-001] = 2
  verdict = fail
`
	sc, err := scenario.Parse("demo.scenario", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Title != "Demo # with a hash kept" || len(sc.Explain) != 2 || sc.Messages != 3 || len(sc.Workers) != 3 {
		t.Fatalf("header: %+v", sc)
	}
	if sc.Workers[2].ID != "Worker-A" || !sc.Workers[0].Slow || sc.Workers[0].Latency.Milliseconds() != 800 {
		t.Fatalf("workers: %+v", sc.Workers)
	}
	st := sc.Settings
	if st.Leasing || !st.Fencing || st.Lease.Milliseconds() != 250 || st.ProviderLatency.Milliseconds() != 50 || sc.Seed != 9 || sc.Teaches != "fencing" {
		t.Fatalf("settings: %+v", st)
	}
	if len(sc.Steps) != 12 || sc.Steps[1].Key != "PAY-001" || sc.Steps[2].Count != 3 || !sc.Steps[8].Random || sc.Steps[8].CrashRate != 0.1 {
		t.Fatalf("steps: %+v", sc.Steps)
	}
	if len(sc.Expect) != 2 || len(sc.Expect[1].When) != 2 || sc.Expect[1].Items[0].Metric != "status_checks[PAY-001]" {
		t.Fatalf("expect: %+v", sc.Expect)
	}
}

// Every kind of bad file gets an error naming file:line and what is wrong.
func TestParseErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"empty", "", "f.scenario: empty scenario file"},
		{"only comments", "# nothing\n\n", "f.scenario: empty scenario file"},
		{"too large", "name: x\n" + strings.Repeat("# pad\n", scenario.MaxScenarioSize/6+1), "f.scenario: file too large"},
		{"not utf8", "name: x\xff\n", "not UTF-8"},
		{"unknown key", "name: x\ncolour: blue\n", `f.scenario:2: unknown key "colour"`},
		{"no colon", "name: x\nworkers A B\n", `f.scenario:2: expected "key: value"`},
		{"missing name", "messages: 3\n", `f.scenario:1: missing "name:"`},
		{"bad name", "name: Big Name\n", `f.scenario:1: bad name "Big Name"`},
		{"bad duration", "name: x\nlease: fast\n", `f.scenario:2: bad duration for lease: "fast"`},
		{"negative duration", "name: x\nlease: -1s\n", "f.scenario:2: bad duration for lease: -1s is out of range"},
		{"sub-ms duration", "name: x\nlease: 1500us\n", "finer than a millisecond"},
		{"bad toggle", "name: x\nleasing: maybe\n", `f.scenario:2: bad leasing: want on or off, got "maybe"`},
		{"bad messages", "name: x\nmessages: 0\n", "f.scenario:2: bad messages"},
		{"duplicate key", "name: x\nlease: 1s\nlease: 2s\n", `f.scenario:3: duplicate key "lease" (first at line 2)`},
		{"duplicate worker", "name: x\nworkers: A B A\n", `f.scenario:2: duplicate worker name "A"`},
		{"duplicate worker line", "name: x\nworkers: A\nworker: A\n", `f.scenario:3: duplicate worker name "A"`},
		{"bad worker name", "name: x\nworkers: A-1\n", `f.scenario:2: bad worker name "A-1"`},
		{"too many workers", "name: x\nworkers: 65\n", "f.scenario:2: bad workers 65"},
		{"unknown worker in step", "name: x\nworkers: A B\nsteps:\n  C claim\n", `f.scenario:4: unknown worker "C"`},
		{"unknown worker in run", "name: x\nworkers: A\nsteps:\n  run A Z\n", `f.scenario:4: unknown worker "Z"`},
		{"unknown slow worker", "name: x\nworkers: A\nslow: B 1s\n", `f.scenario:3: unknown worker "B"`},
		{"unknown verb", "name: x\nsteps:\n  A dance\n", `f.scenario:3: A: unknown verb "dance"`},
		{"unknown step", "name: x\nsteps:\n  42 go\n", `f.scenario:3: unknown step "42"`},
		{"bad clock", "name: x\nsteps:\n  clock noon\n", `f.scenario:3: clock: bad time "noon"`},
		{"bad set", "name: x\nsteps:\n  set colour on\n", `f.scenario:3: set: unknown toggle "colour"`},
		{"bad run option", "name: x\nsteps:\n  run fast!\n", `f.scenario:3: run: unknown option "fast!"`},
		{"bad rate", "name: x\nsteps:\n  run crash-rate=2\n", "f.scenario:3: run: bad crash-rate"},
		{"bad step count", "name: x\nsteps:\n  A step 0\n", "f.scenario:3: A step: bad count"},
		{"extra args", "name: x\nsteps:\n  A crash now\n", `f.scenario:3: A crash: unexpected "now"`},
		{"duplicate steps", "name: x\nsteps:\nsteps:\n", "f.scenario:3: duplicate steps: section"},
		{"unknown metric", "name: x\nexpect:\n  speed = 3\n", `f.scenario:3: expect: unknown metric "speed"`},
		{"bad number", "name: x\nexpect:\n  lost = none\n", `f.scenario:3: expect: bad number "none"`},
		{"bad verdict", "name: x\nexpect:\n  verdict = maybe\n", "f.scenario:3: expect: verdict takes"},
		{"no operator", "name: x\nexpect:\n  lost\n", "f.scenario:3: expect: want"},
		{"bad when", "name: x\nexpect when colour=on:\n", `f.scenario:2: expect when: unknown toggle "colour"`},
		{"bad expect header", "name: x\nexpect sometimes:\n", "f.scenario:2: want \"expect:\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenario.Parse("f.scenario", []byte(c.src))
			var pe *scenario.ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant a ParseError containing %q", err, c.want)
			}
		})
	}
}

// FuzzParse: no input makes the parser panic, and whatever it accepts is a usable scenario.
func FuzzParse(f *testing.F) {
	for _, n := range assets.Names() {
		data, _, _ := assets.Scenario(n)
		f.Add(data)
	}
	f.Add([]byte("name: x\nsteps:\n  A step 3\nexpect when leasing=on:\n  status_checks[PAY-001] = 2\n"))
	f.Add([]byte("name: x\nworkers: 3\nworker: Z id=Worker-A\nslow: Z 1s\n"))
	f.Add([]byte("\uFEFFname: x\r\ntitle: a\x1b[2J\r\nsteps:\r  A step 100000\r  B step 2\n  run crash-rate=0.3 pause-rate=0.2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scenario.Parse("fuzz.scenario", data)
		if err != nil {
			var pe *scenario.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error of the wrong type: %T %v", err, err)
			}
			return
		}
		if sc.Name == "" || len(sc.Workers) == 0 || sc.Messages < 1 || sc.Settings.Lease <= 0 {
			t.Fatalf("accepted an unusable scenario: %+v", sc)
		}
		if err := sc.Apply(engine.Overrides{}); err != nil {
			t.Fatalf("accepted scenario fails Apply: %v", err)
		}
		// Nothing accepted carries a control character to a terminal, or asks for unbounded work.
		texts := append([]string{sc.Title, sc.Pass, sc.Failure}, sc.Explain...)
		for _, w := range sc.Workers {
			texts = append(texts, w.ID, w.Short)
		}
		for _, st := range sc.Steps {
			texts = append(texts, st.Text)
		}
		for _, s := range texts {
			if words.Escape(s) != s {
				t.Fatalf("accepted text %q that needs escaping", s)
			}
		}
		actions := 0
		for _, st := range sc.Steps {
			actions += st.Count
			if st.CrashRate+st.PauseRate > 0.5 {
				t.Fatalf("accepted rates %v + %v", st.CrashRate, st.PauseRate)
			}
		}
		if actions > scenario.MaxScriptActions || sc.Messages > engine.MaxScenarioMessages || sc.Messages*len(sc.Workers) > engine.MaxScenarioWork || engine.CheckLease(sc.Settings.Lease) != nil {
			t.Fatalf("accepted %d actions, %d messages, lease %s", actions, sc.Messages, sc.Settings.Lease)
		}
	})
}

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
	if !slices.Equal(sc.Requires, []string{engine.CapRowLocks}) {
		t.Errorf("backend: postgres requires %v, want row-locks", sc.Requires)
	}
	if sc, err := scenario.Parse("y", []byte("name: y\nrequires: redrive row-locks redrive\nsteps:\n  A step\n")); err != nil || !slices.Equal(sc.Requires, []string{"redrive", engine.CapRowLocks}) {
		t.Errorf("requires: redrive row-locks redrive = %v, %v; want [redrive row-locks]", sc.Requires, err)
	}
	if !strings.Contains(sc.Settings.Describe(), "skip-locked=off lock-timeout=250ms") {
		t.Fatalf("describe: %s", sc.Settings.Describe())
	}
	for _, c := range []struct{ line, want string }{
		{"backend: mysql", "x.scenario:4: bad backend \"mysql\""},
		{"requires: row-locks wings", "x.scenario:4: requires: unknown capability \"wings\""},
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
