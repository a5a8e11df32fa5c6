package engine_test

import (
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/engine/scenario"
)

// The two lessons of issue 20's items 4 and 5, headless on SQLite and PostgreSQL, each toggle
// both ways: the failure found and counted with the fix off, none with it on, and every
// expectation the file declares met.
func TestRescuerAndSkewLessons(t *testing.T) {
	type want struct {
		toggles                   map[string]bool
		check                     string // the check that decides, and whether it holds
		ok                        bool
		rescuedFinished, refused  int
		earlyReclaims, fenced     int
		providerCalls, finalTwice int
		text                      string
	}
	cases := map[string][]want{
		"rescuer-race": {
			{toggles: map[string]bool{engine.ToggleGuardedRescue: false}, check: engine.CheckNoUndoneFinish, ok: false,
				rescuedFinished: 1, providerCalls: 2, finalTwice: 1,
				text: "[FAIL] no rescue set a finished message back to Pending: 1 of 1 rescues"},
			{toggles: map[string]bool{engine.ToggleGuardedRescue: true}, check: engine.CheckNoUndoneFinish, ok: true,
				refused: 1, providerCalls: 1,
				text: "Rescuer-R's guarded rescue of PAY-001 changed 0 rows"},
		},
		"clock-skew": {
			{toggles: map[string]bool{}, check: engine.CheckNoEarlyReclaim, ok: false, earlyReclaims: 1, providerCalls: 2,
				text: "[FAIL] no lease reclaimed before it ended, by the one true clock: 1 reclaimed while live"},
			{toggles: map[string]bool{engine.ToggleProviderFencing: true}, check: engine.CheckNoEarlyReclaim, ok: false,
				earlyReclaims: 1, fenced: 1, providerCalls: 1,
				text: "refused, a newer lease version has called (provider fencing)"},
			{toggles: map[string]bool{engine.ToggleDBClock: true}, check: engine.CheckNoEarlyReclaim, ok: true, providerCalls: 1,
				text: "Worker-B claim BLOCKED: PAY-001 is leased by Worker-A until 09:00:00.500Z"},
		},
	}
	for _, be := range []string{"sqlite", "postgres"} {
		for name, ws := range cases {
			for _, w := range ws {
				t.Run(be+"/"+name+"/"+togglesName(w.toggles), func(t *testing.T) {
					sc := loadScenario(t, name, "")
					if err := sc.Apply(engine.Overrides{Toggles: w.toggles}); err != nil {
						t.Fatal(err)
					}
					s := sessionOn(t, be, sc)
					sum := runSession(t, s)
					if !sum.ExpectationsMet {
						t.Errorf("expectations not met: %+v", sum.Expectations)
					}
					found := false
					for _, c := range sum.Checks {
						if c.ID == w.check {
							found = true
							if c.OK != w.ok || !c.Decides {
								t.Errorf("check %s: ok %v decides %v, want ok %v, deciding", c.ID, c.OK, c.Decides, w.ok)
							}
						}
					}
					if !found {
						t.Errorf("no check %s in %+v", w.check, sum.Checks)
					}
					var r engine.RescuerSummary
					if sum.Rescuer != nil {
						r = *sum.Rescuer
					}
					var c engine.ClockSummary
					if sum.Clocks != nil {
						c = *sum.Clocks
					}
					if r.RescuedFinished != w.rescuedFinished || r.Refused != w.refused || c.EarlyReclaims != w.earlyReclaims ||
						c.FencedCalls != w.fenced || sum.StatusChecks != w.providerCalls || sum.FinalizedMoreThanOnce != w.finalTwice {
						t.Errorf("rescued finished %d refused %d, early reclaims %d fenced %d, provider calls %d, finalized twice %d; want %+v",
							r.RescuedFinished, r.Refused, c.EarlyReclaims, c.FencedCalls, sum.StatusChecks, sum.FinalizedMoreThanOnce, w)
					}
					if text := reportText(t, s); !strings.Contains(text, w.text) {
						t.Errorf("the report lacks %q:\n%s", w.text, text)
					}
				})
			}
		}
	}
}

// The rescuer's and the clocks' lines are refused at their line when wrong.
func TestRescuerParseErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"rescuer: R\n", `f.scenario:1: rescuer: want "NAME every DURATION"`},
		{"rescuer: R every soon\n", `f.scenario:1: bad duration for rescuer every: "soon"`},
		{"rescuer: R every 0ms\n", `f.scenario:1: rescuer: every 0ms is out of range`},
		{"workers: A B\nrescuer: A every 200ms\n", `f.scenario:2: rescuer: "A" is already a worker's name`},
		{"workers: A\nrescuer: R every 200ms\nsteps:\n  R sweep\n", `f.scenario:4: R sweep: unknown rescuer verb (scan, rescue)`},
		{"workers: A\nrescuer: R every 200ms\nsteps:\n  R scan now\n", `f.scenario:4: R: the rescuer's steps are "R scan" and "R rescue"`},
		{"workers: A B\nskew: C +400ms\n", `f.scenario:2: skew: unknown worker "C"`},
		{"workers: A B\nskew: B 400ms\n", `f.scenario:2: skew: bad skew "400ms": want a signed duration`},
		{"workers: A B\nskew: B +2h\n", `f.scenario:2: skew: bad skew "+2h": out of range`},
		{"workers: A B\nskew: B +1ms\nskew: B +2ms\n", `f.scenario:3: skew: worker B named twice`},
		{"guarded-rescue: maybe\n", `f.scenario:1: bad guarded-rescue`},
	} {
		_, err := scenario.Parse("f.scenario", []byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s…", c.text, err, c.want)
		}
	}
}

// --skew names a worker the run has, and sets its offset.
func TestSkewOverride(t *testing.T) {
	sc := loadScenario(t, "", "name: x\nworkers: A B\n")
	if err := sc.Apply(engine.Overrides{Skew: map[string]time.Duration{"C": time.Second}}); err == nil {
		t.Error("--skew C=+1s on a run without C was accepted")
	}
	if err := sc.Apply(engine.Overrides{Skew: map[string]time.Duration{"B": 400 * time.Millisecond}}); err != nil || sc.Workers[1].Skew != 400*time.Millisecond {
		t.Errorf("--skew B=+400ms: %v, %v", err, sc.Workers[1].Skew)
	}
}

func togglesName(m map[string]bool) string {
	name := "default"
	for k, v := range m {
		name = k + "=" + engine.OnOff(v)
	}
	return name
}
