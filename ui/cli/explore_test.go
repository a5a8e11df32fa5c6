package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"leaselab/store/storetest"
)

// guardOffLessons are each lesson's guard off, and the check its search must find broken.
var guardOffLessons = []struct{ scenario, flag, check string }{
	{"playground", "--atomic-claim=false", "one-owner"},
	{"playground", "--leasing=false", "one-owner"},
	{"playground", "--ownership-check=false", "no-violations"},
	{"aba-fencing", "--fencing=false", "no-violations"},
	{"rescuer-race", "--guarded-rescue=false", "no-undone-finish"},
	{"clock-skew", "--db-clock=false", "no-early-reclaim"},
}

// TestExploreFindsEachLesson: with each guard off in turn, explore finds, within its default
// bounds, a violation of the check the lesson names, and its --out file fails that same check
// under leaselab run. The fencing, rescuer and clock lessons start from their own headers: the
// playground has no second thread of one worker id, no rescuer and no skewed clock.
func TestExploreFindsEachLesson(t *testing.T) {
	for _, c := range guardOffLessons {
		t.Run(c.scenario+c.flag, func(t *testing.T) { exploreFinds(t, c.scenario, c.flag, c.check, "") })
	}
}

// TestExploreFindsEachLessonOnPostgres: the same searches on a PostgreSQL schema of their own
// find the same schedules, and their --out files fail the same checks under run --db.
func TestExploreFindsEachLessonOnPostgres(t *testing.T) {
	url := storetest.PostgresURL(t)
	for _, c := range guardOffLessons {
		t.Run(c.scenario+c.flag, func(t *testing.T) {
			onFile := exploreFinds(t, c.scenario, c.flag, c.check, "")
			onServer := exploreFinds(t, c.scenario, c.flag, c.check, url)
			if onFile != onServer {
				t.Errorf("SQLite found:\n%s\nPostgreSQL found:\n%s", onFile, onServer)
			}
		})
	}
}

// exploreFinds runs explore of scenario with flag (on db, a PostgreSQL URL, or "" for a SQLite
// file), wants a violation of check, and replays its --out file with run (on db too), which must
// fail check. It returns the schedule found, one move a line.
func exploreFinds(t *testing.T, scenario, flag, check, db string) string {
	t.Helper()
	var dbArgs []string
	if db != "" {
		dbArgs = []string{"--db", db}
	}
	out := filepath.Join(t.TempDir(), "found.scenario")
	code, stdout, stderr := cli(t, append([]string{"explore", scenario, flag, "--out", out, "--progress", "0"}, dbArgs...)...)
	if code != exitExpect {
		t.Fatalf("explore exit %d, want %d\n%s%s", code, exitExpect, stdout, stderr)
	}
	if !strings.Contains(stdout, "a shortest schedule that breaks "+check) {
		t.Fatalf("explore did not name %s:\n%s", check, stdout)
	}
	var schedule []string
	for _, l := range strings.Split(stdout, "\n") {
		if regexp.MustCompile(`^ [ !] ?\d+  `).MatchString(l) {
			schedule = append(schedule, strings.TrimSpace(l))
		}
	}
	if len(schedule) == 0 {
		t.Fatalf("no schedule in:\n%s", stdout)
	}
	code, stdout, stderr = cli(t, append([]string{"run", out, "--json", "--report-dir", ""}, dbArgs...)...)
	if code != exitExpect {
		t.Fatalf("run %s: exit %d, want %d\n%s%s", out, code, exitExpect, stdout, stderr)
	}
	var sum struct {
		Checks []struct {
			ID string `json:"id"`
			OK bool   `json:"ok"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("run --json: %v\n%s", err, stdout)
	}
	failed := false
	for _, ch := range sum.Checks {
		failed = failed || ch.ID == check && !ch.OK
	}
	if !failed {
		t.Errorf("run %s: check %s did not fail: %+v", out, check, sum.Checks)
	}
	return strings.Join(schedule, "\n")
}

// TestExploreProvesPlayground: with every guard on, a bounded search of the playground finds
// nothing and says what it proved, with its figures.
func TestExploreProvesPlayground(t *testing.T) {
	code, stdout, stderr := cli(t, "explore", "playground", "--depth", "5", "--progress", "0")
	if code != exitOK {
		t.Fatalf("exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	containsAll(t, "the proof", stdout, "no schedule of depth ≤ 5 with ≤ 1 crash and ≤ 2 clock moves breaks a safety check: ",
		" states (", " distinct, ", "checked after every move: one-owner, ")
}

// TestExploreJSONAndBounds: --json has the figures, a --max-states bound that cuts the search
// says so, and bad bounds are refused naming their flag.
func TestExploreJSONAndBounds(t *testing.T) {
	code, stdout, _ := cli(t, "explore", "playground", "--depth", "4", "--max-states", "20", "--json", "--progress", "0")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	var j struct {
		Found bool   `json:"found"`
		Cut   string `json:"cut"`
		Stats struct {
			States   int `json:"states"`
			Distinct int `json:"distinct"`
			Unstored int `json:"unstored"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if j.Found || j.Cut != "max-states" || j.Stats.Distinct != 20 || j.Stats.Unstored == 0 || j.Stats.States <= j.Stats.Distinct {
		t.Errorf("--max-states 20: %+v", j)
	}
	_, stdout, _ = cli(t, "explore", "playground", "--depth", "4", "--max-states", "20", "--progress", "0")
	containsAll(t, "the cut", stdout, "--max-states 20 cut the search: ")
	for _, bad := range [][]string{{"--depth", "0"}, {"--crashes", "-1"}, {"--clock-moves", "-2"}, {"--max-states", "0"},
		{"--time-limit", "-1s"}, {"--restore", "disk"}, {"--check", "none-lost"}, {"--cores", "0"},
		{"--resume", filepath.Join(t.TempDir(), "none")}, {"--checkpoint", "explore_test.go"}} {
		code, _, stderr := cli(t, append([]string{"explore", "playground"}, bad...)...)
		if code != exitUsage || !strings.Contains(stderr, bad[0]) {
			t.Errorf("explore %v: exit %d, stderr %q: want %d naming %s", bad, code, stderr, exitUsage, bad[0])
		}
	}
}

// TestExploreOpen: --open hands the violation's scenario file to the lab, which loads it
// (before it asks for a terminal, which a test has not: the lab's own refusal, exit 2).
func TestExploreOpen(t *testing.T) {
	code, stdout, stderr := cli(t, "explore", "playground", "--leasing=false", "--open", "--progress", "0")
	if code != exitUsage || !strings.Contains(stderr, "the lab needs a terminal") {
		t.Fatalf("exit %d, stderr %q: want the lab's refusal of a test's stdin", code, stderr)
	}
	containsAll(t, "the schedule", stdout, "a shortest schedule that breaks one-owner")
	if code, _, stderr := cli(t, "explore", "playground", "--open", "--json"); code != exitUsage || !strings.Contains(stderr, "--open") {
		t.Errorf("--open --json: exit %d, stderr %q", code, stderr)
	}
}

// TestExploreLessonFile: docs/explore-naive-claim.scenario, the file docs/explore.md walks a
// room through, is exactly what explore writes for the naive claim.
func TestExploreLessonFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "found.scenario")
	if code, stdout, stderr := cli(t, "explore", "playground", "--atomic-claim=false", "--out", out, "--progress", "0"); code != exitExpect {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", "explore-naive-claim.scenario"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("docs/explore-naive-claim.scenario is not what explore writes now:\n%s", got)
	}
}

// TestExploreInterrupted: Ctrl-C prints what was explored so far, then exits 130.
func TestExploreInterrupted(t *testing.T) {
	c := start(t, "explore", "playground", "--depth", "30", "--progress", "100ms", "--time-limit", "0")
	// The first progress line may come after depth 2 or later, as fast as the machine is.
	c.waitMatch(t, regexp.MustCompile(`explore: depth [0-9]+ done`), 60*time.Second)
	c.cmd.Process.Signal(os.Interrupt)
	if code := c.exitCode(t, 60*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, c.output())
	}
	containsAll(t, "the interrupted search", c.output(), "interrupted during depth ", ": what was explored so far",
		"no schedule of depth ≤ ", "leaselab: interrupted by SIGINT")
}

// TestExploreJSONViolation: --json of a violation has the schedule, the checks it broke, no
// proof, the bounds searched and where the time went; exit 1.
func TestExploreJSONViolation(t *testing.T) {
	code, stdout, stderr := cli(t, "explore", "playground", "--atomic-claim=false", "--json", "--progress", "0")
	if code != exitExpect {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitExpect, stdout, stderr)
	}
	var j struct {
		Found    bool                  `json:"found"`
		Schedule []string              `json:"schedule"`
		Failed   []struct{ ID string } `json:"failed"`
		Proved   *json.RawMessage      `json:"proved"`
		Bounds   struct {
			Depth int `json:"depth"`
		} `json:"bounds"`
		Stats struct {
			States int `json:"states"`
		} `json:"stats"`
		TimeSpent map[string]int64 `json:"time_ms"`
	}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	failed := false
	for _, c := range j.Failed {
		failed = failed || c.ID == "one-owner"
	}
	if !j.Found || len(j.Schedule) != 6 || !failed || j.Proved != nil || j.Bounds.Depth != 10 || j.Stats.States == 0 {
		t.Errorf("--json of the naive claim: %+v", j)
	}
	for _, k := range []string{"restore", "replay", "moves", "checks", "copies"} {
		if _, ok := j.TimeSpent[k]; !ok {
			t.Errorf("time_ms has no %q: %v", k, j.TimeSpent)
		}
	}
}
