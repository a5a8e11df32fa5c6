package scenario_test

import (
	"errors"
	"strings"
	"testing"

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
