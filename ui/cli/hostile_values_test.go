package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// Scenario values the hostile run found taken: a NaN rate, on/off keys given yes or 1, and a
// rescuer named as a worker declared after it. Each is refused at its line, exit 2, the file
// unchanged and no report written (the whole family of values: engine/scenario's
// TestEveryValueIsChecked).
func TestHostileScenarioValues(t *testing.T) {
	const head = "name: v\nmessages: 3\nworkers: A B\n"
	reports := func(setup func(t *testing.T, dir string) ([]string, string)) func(t *testing.T, dir string) ([]string, string) {
		return func(t *testing.T, dir string) ([]string, string) {
			args, file := setup(t, dir)
			out := filepath.Join(dir, "reports")
			args = append(args, "--report-dir", out)
			t.Cleanup(func() {
				if _, err := os.Stat(out); err == nil {
					t.Errorf("a report folder was made: %s", out)
				}
			})
			return args, file
		}
	}
	runHostile(t, "scenario values", []hostileCase{
		{name: "fail-rate: NaN", setup: reports(inputFile("v.scenario", head+"fail-rate: NaN\n")),
			code: exitUsage, msg: `v.scenario:4: bad fail-rate "NaN": want a chance from 0 to 1`, unchanged: true},
		{name: "--fail-rate NaN", setup: reports(inputFile("v.scenario", head, "--fail-rate", "NaN")),
			code: exitUsage, msg: "--fail-rate NaN: want a chance from 0 to 1", unchanged: true},
		{name: "db-clock: yes", setup: reports(inputFile("v.scenario", head+"db-clock: yes\n")),
			code: exitUsage, msg: `v.scenario:4: bad db-clock: want on or off, got "yes"`, unchanged: true},
		{name: "provider-fencing: 1", setup: reports(inputFile("v.scenario", head+"provider-fencing: 1\n")),
			code: exitUsage, msg: `v.scenario:4: bad provider-fencing: want on or off, got "1"`, unchanged: true},
		{name: "set leasing true (a step)", setup: reports(inputFile("v.scenario", head+"steps:\n  set leasing true\n")),
			code: exitUsage, msg: `v.scenario:5: set leasing: want on or off, got "true"`, unchanged: true},
		{name: "rescuer: A every 200ms, then workers: A B", setup: reports(inputFile("v.scenario", "name: v\nrescuer: A every 200ms\nworkers: A B\n")),
			code: exitUsage, msg: `v.scenario:3: worker "A": that is the rescuer's name (line 2)`, unchanged: true},
	})
}
