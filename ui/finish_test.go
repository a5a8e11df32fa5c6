package ui

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/store"
)

// runLikeRun runs scenario name as leaselab run does (RunToEnd on a fresh database) and returns
// its summary and its workers' ledgers.
func runLikeRun(t *testing.T, name string, o engine.Overrides) (*engine.Summary, []engine.WorkerLedger) {
	t.Helper()
	ctx := context.Background()
	sc, err := loadScenario(name, o)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Create(ctx, filepath.Join(t.TempDir(), "run.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := engine.NewSession(ctx, sc, fixedPathDB{db})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Script().RunToEnd(ctx); err != nil && !errors.Is(err, engine.ErrNoProgress) {
		t.Fatal(err) // a run the watchdog ends still has its verdict, as leaselab run's has
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ls []engine.WorkerLedger
	for _, w := range s.Workers() {
		ls = append(ls, s.Ledger().Worker(w.Name))
	}
	return sum, ls
}

// ledgerFigures are the summary's counted figures, without what names the run (title,
// database, settings) or explains it.
func ledgerFigures(s *engine.Summary) engine.Summary {
	c := *s
	c.Title, c.Database, c.Settings, c.ReportFile = "", "", nil, ""
	c.Checks, c.Expectations, c.Recovery = nil, nil, nil
	return c
}

// e runs the rest of a scenario at full speed and stops at its verdict, with every ledger as
// leaselab run counts it.
func TestFinishKeyRunsToTheVerdictLikeRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    engine.Overrides
	}{
		{"playground", engine.Overrides{}}, // no script: e is one "run until-done", as in leaselab run
		{"many-workers", engine.Overrides{Messages: 60, Toggles: map[string]bool{engine.ToggleLeasing: false}}},
	} {
		t.Run(tc.name+"/"+engine.OnOff(tc.o.Toggles[engine.ToggleLeasing] || tc.o.Toggles == nil), func(t *testing.T) {
			want, wantLedgers := runLikeRun(t, tc.name, tc.o)
			l := newLab(t, tc.name, 120, 40, tc.o)
			l.press("e")
			if l.m.finish.on {
				t.Fatalf("e still running after its commands: %q", l.m.status.Text)
			}
			f := l.m.frame
			if f.ScriptIndex < f.ScriptTotal || !f.Done {
				t.Fatalf("e stopped at script %d/%d, done %v: %q", f.ScriptIndex, f.ScriptTotal, f.Done, l.m.status.Text)
			}
			verdict := "VERDICT: FAIL"
			if want.Passed {
				verdict = "VERDICT: PASS"
			}
			l.must("ran to the end at full speed", verdict)
			if got := ledgerFigures(f.Summary); !reflect.DeepEqual(got, ledgerFigures(want)) {
				t.Errorf("ledgers after e differ from leaselab run's:\n lab %+v\n run %+v", got, ledgerFigures(want))
			}
			if !reflect.DeepEqual(f.Ledgers, wantLedgers) {
				t.Errorf("workers' ledgers after e differ from leaselab run's:\n lab %+v\n run %+v", f.Ledgers, wantLedgers)
			}
		})
	}
}

// While e runs, the step keys say why they do nothing; e again stops it between two chunks.
func TestFinishKeyStopsAndShowsProgress(t *testing.T) {
	l := newLab(t, "many-workers", 120, 40, engine.Overrides{Messages: 40})
	l.m.keys.setFinishing(true) // as e does, without running: the keys while it runs
	l.m.finish.on = true
	l.press("n")
	l.must("running to the end at full speed: e stops it first")
	if l.m.track.Acted() != 0 {
		t.Fatal("space stepped while e runs")
	}
	if foot := l.m.help().shortHelp(120); !strings.Contains(foot, "e stop") || strings.Contains(foot, "space step") {
		t.Errorf("footer while e runs: %q", foot)
	}
	l.press("e")
	if l.m.finish.on || !l.m.keys.Step.Enabled() {
		t.Fatal("e did not stop running to the end")
	}
	l.must("stopped running to the end after 0 steps")
	// A chunk's progress on the status line.
	l.m.finish = finishMode{on: true, id: 7, actions: 1234}
	l.m.frame.ScriptIndex = 0
	if p := l.m.finish.progress(l.m.frame, l.m.keys.Finish); !strings.Contains(p, "1234 steps, script 0/1, 0/40 processed") || !strings.Contains(p, "(e stops)") {
		t.Errorf("progress: %q", p)
	}
}

// e at the end of the script says so instead of running.
func TestFinishKeyAtTheEnd(t *testing.T) {
	l := newLab(t, "stale-owner", 120, 40, engine.Overrides{})
	l.press("e")
	l.must("ran to the end")
	l.press("e")
	l.must("the script is already at its end", "R starts it again")
}

// BenchmarkFinishManyWorkers times e over the whole of many-workers (500 messages, 8 workers),
// with leasing on and off: go test ./ui -run '^$' -bench FinishManyWorkers -benchtime 1x.
func BenchmarkFinishManyWorkers(b *testing.B) {
	for _, leasing := range []bool{true, false} {
		b.Run("leasing-"+engine.OnOff(leasing), func(b *testing.B) {
			o := engine.Overrides{Toggles: map[string]bool{engine.ToggleLeasing: leasing}}
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				l := newLab(b, "many-workers", 120, 40, o)
				b.StartTimer()
				l.press("e")
				if !l.m.frame.Done {
					b.Fatalf("e did not reach the verdict: %q", l.m.status.Text)
				}
				b.ReportMetric(float64(l.m.finish.actions), "actions")
			}
		})
	}
}

// e reaches the verdict in every built-in scenario, both ways of the toggle it teaches, and it
// is leaselab run's verdict, with leaselab run's ledgers — but for a concurrent phase, where
// the workers race on goroutines in leaselab run and the lab steps them in turn.
func TestFinishKeyReachesEveryVerdict(t *testing.T) {
	skipSweepUnderRace(t)
	for _, name := range sqliteLessons() {
		for _, flip := range []bool{false, true} {
			o := engine.Overrides{}
			if name == "many-workers" {
				o.Messages = 60 // its 500 take seconds: the benchmark times them
			}
			if flip {
				l := newLab(t, name, 120, 40, o)
				teaches := l.m.frame.Teaches
				if teaches == "" {
					teaches = engine.ToggleLeasing
				}
				on, _ := l.m.frame.Settings.Get(teaches)
				o.Toggles = map[string]bool{teaches: !on}
			}
			want, wantLedgers := runLikeRun(t, name, o)
			l := newLab(t, name, 120, 40, o)
			l.press("e")
			f := l.m.frame
			if f.ScriptIndex < f.ScriptTotal || l.m.finish.on {
				t.Errorf("%s %v: e stopped at script %d/%d: %q", name, o.Toggles, f.ScriptIndex, f.ScriptTotal, l.m.status.Text)
				continue
			}
			if !strings.Contains(l.m.status.Text, "ran to the end at full speed") || !strings.Contains(l.m.status.Text, "— VERDICT: ") {
				t.Errorf("%s %v: status after e %q, no verdict", name, o.Toggles, l.m.status.Text)
			}
			if concurrent(t, name) {
				continue // leaselab run's own verdict depends on how its goroutines raced
			}
			verdict := "— VERDICT: FAIL"
			if want.Passed {
				verdict = "— VERDICT: PASS"
			}
			if !strings.Contains(l.m.status.Text, verdict) {
				t.Errorf("%s %v: status after e %q, want leaselab run's %s", name, o.Toggles, l.m.status.Text, verdict)
			}
			if got := ledgerFigures(f.Summary); !reflect.DeepEqual(got, ledgerFigures(want)) {
				t.Errorf("%s %v: ledgers after e differ from leaselab run's:\n lab %+v\n run %+v", name, o.Toggles, got, ledgerFigures(want))
			}
			if !reflect.DeepEqual(f.Ledgers, wantLedgers) {
				t.Errorf("%s %v: workers' ledgers after e differ from leaselab run's:\n lab %+v\n run %+v", name, o.Toggles, f.Ledgers, wantLedgers)
			}
		}
	}
}

// concurrent reports whether scenario name has a concurrent phase.
func concurrent(t *testing.T, name string) bool {
	t.Helper()
	sc, err := loadScenario(name, engine.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sc.Steps {
		if st.Kind == engine.StepConcurrent {
			return true
		}
	}
	return false
}
