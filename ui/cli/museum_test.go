package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/store/storetest"
)

// TestListIncidents: list shows the incident lessons under a heading of their own, after the
// lessons, and list --json gives every scenario its incident card and fix toggle.
func TestListIncidents(t *testing.T) {
	code, out, _ := cli(t, "list")
	if code != 0 {
		t.Fatalf("list: exit %d", code)
	}
	head := strings.Index(out, "Incidents:")
	if head < 0 || head < strings.Index(out, "clock-skew") {
		t.Fatalf("no Incidents heading after the lessons:\n%s", out)
	}
	for _, n := range assets.Museum() {
		if i := strings.Index(out, n); i < head && slices.Contains(assets.Names(), n) {
			t.Errorf("%s is not under the heading:\n%s", n, out)
		}
	}
	code, out, _ = cli(t, "list", "--json")
	if code != 0 {
		t.Fatalf("list --json: exit %d", code)
	}
	var all []map[string]any
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	cards := map[string]string{}
	for _, l := range all {
		if _, ok := l["incident"]; !ok {
			t.Errorf("%v: no \"incident\" key", l["name"])
		}
		if inc, ok := l["incident"].(map[string]any); ok {
			cards[l["name"].(string)] = l["fix_toggle"].(string)
			for _, k := range []string{"system", "sources", "what", "guard", "fix"} {
				if inc[k] == nil || inc[k] == "" {
					t.Errorf("%v: incident without %s", l["name"], k)
				}
			}
		}
	}
	for n, fix := range museumFixes {
		got, ok := cards[n]
		if !ok || got != fix {
			t.Errorf("%s: fix_toggle %q, want %q", n, got, fix)
		}
	}
}

// TestRunPrintsIncident: run prints the card above the report.
func TestRunPrintsIncident(t *testing.T) {
	code, out, _ := cli(t, "run", "rescuer-race", "--report-dir", "")
	if code != 0 {
		t.Fatalf("run rescuer-race: exit %d, want 0 (it fails as the scenario expects)\n%s", code, out)
	}
	card, report := strings.Index(out, "INCIDENT:"), strings.Index(out, "LEASELAB RUN REPORT")
	if card < 0 || report < card || !strings.Contains(out[card:report], "issues/1302") {
		t.Fatalf("no card above the report:\n%s", out)
	}
}

// museumFixes are the incident lessons and their fix toggles, as their scenario files name
// them; an explore of each, as it opens, finds a counterexample, and with the fix finds none
// within the default bounds.
var museumFixes = map[string]string{
	"rescuer-race":          "guarded-rescue",
	"state-only-completion": "fencing",
	"stale-delete":          "fencing",
	"finished-and-failed":   "guarded-rescue",
	"coarse-clock":          "strict-expiry",
}

// TestExploreMuseum: for each incident lesson, explore finds the shortest counterexample as
// the lesson opens, and proves the fix to the default bounds.
func TestExploreMuseum(t *testing.T) {
	for name, fix := range museumFixes {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := cli(t, "explore", name, "--progress", "0")
			if code != exitExpect || !strings.Contains(out, "a shortest schedule that breaks") {
				t.Fatalf("explore %s: exit %d, want %d and a counterexample\n%s%s", name, code, exitExpect, out, errOut)
			}
			if testing.Short() {
				return // the proof searches thousands of states: seconds each
			}
			code, out, errOut = cli(t, "explore", name, "--"+fix, "--progress", "0")
			if code != exitOK || !strings.Contains(out, "no schedule of depth ≤") {
				t.Fatalf("explore %s --%s: exit %d, want %d and a bounded proof\n%s%s", name, fix, code, exitOK, out, errOut)
			}
		})
	}
}

// TestMuseumVerdictsBothBackends: each incident lesson's run as it opens fails, and with its
// fix passes, on SQLite and on PostgreSQL alike, each as its expectations say.
func TestMuseumVerdictsBothBackends(t *testing.T) {
	pg := storetest.PostgresURL(t)
	ctx := context.Background()
	for name, fix := range museumFixes {
		for _, on := range []bool{false, true} {
			for _, where := range []string{"", pg} {
				data, src, _ := assets.Scenario(name)
				sc, err := scenario.Parse(src, data)
				if err != nil {
					t.Fatal(err)
				}
				if err := sc.Apply(engine.Overrides{Toggles: map[string]bool{fix: on}}); err != nil {
					t.Fatal(err)
				}
				rep, err := runScenario(ctx, sc, &dbOpener{b: backends(), path: where})
				if err != nil {
					t.Fatalf("%s --%s=%v on %q: %v", name, fix, on, where, err)
				}
				sum := rep.Summary
				if sum.Passed != on || !sum.ExpectationsMet {
					t.Errorf("%s --%s=%v on %q: passed %v (want %v), expectations met %v", name, fix, on, where, sum.Passed, on, sum.ExpectationsMet)
				}
			}
		}
	}
}

// TestTranscriptHoldsIncident: run's transcript has the card as a section of its own.
func TestTranscriptHoldsIncident(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.md")
	code, out, errOut := cli(t, "run", "finished-and-failed", "--report-dir", "", "--transcript", path)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	md := string(data)
	if !strings.Contains(md, "## Incident") || !strings.Contains(md, "solid_queue/issues/589") || !strings.Contains(md, "guarded-rescue") {
		t.Fatalf("the transcript has no incident card:\n%s", md)
	}
}
