package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"leaselab/store"
)

func TestRunBeforeJSON(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := cli(t, "run", "before", "--json", "--report-dir", dir)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for key, want := range map[string]float64{"processing_attempts": 12, "status_checks": 12,
		"processed_more_than_once": 6, "unique_processed": 6, "duplicate_rows": 0} {
		if sum[key] != want {
			t.Errorf("%s = %v, want %v", key, sum[key], want)
		}
	}
	pay := sum["payments"].(map[string]any)
	box := sum["outbox"].(map[string]any)
	if pay["paid"] != 4.0 || pay["failed"] != 2.0 || pay["pending"] != 0.0 || box["processed"] != 6.0 || box["pending"] != 0.0 || box["processing"] != 0.0 {
		t.Errorf("payments %v, outbox %v", pay, box)
	}
	if sum["expectations_met"] != true || sum["passed"] != false || !strings.Contains(sum["verdict"].(string), "❌") {
		t.Errorf("expectations_met %v, passed %v, verdict %v", sum["expectations_met"], sum["passed"], sum["verdict"])
	}
	for _, key := range []string{"scenario", "claims_won", "claims_empty", "claims_blocked", "ownership_violations",
		"rejected_finalizes", "processed_by_worker", "creation_calls", "checks", "verdict"} {
		if _, ok := sum[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
}

// The saved report holds exactly what the text run printed.
func TestRunSavesTheReportItPrints(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := cli(t, "run", "after", "--report-dir", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "after-RunReport-*.txt"))
	if len(files) != 1 {
		t.Fatalf("report files: %v", files)
	}
	saved, _ := os.ReadFile(files[0])
	printed, note, _ := strings.Cut(out, "\nReport saved: ")
	if string(saved) != printed || strings.TrimSpace(note) != files[0] {
		t.Fatalf("saved report differs from the printed one (or note %q)", note)
	}
	containsAll(t, "the report", printed, "== Schema ==", "CREATE TABLE OutboxMessages", "== Timeline", "== Lease-expiry demo ==",
		"blocked before expiry:   true", "== Per-message ownership", "== Ledgers", "== Safety checks ==", "== Verdict ==",
		"OUTBOX LEASING — ONE OWNER PER MESSAGE, AND OWNERSHIP EXPIRES ✅")
}

func TestUsageErrorsExit2(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "nosuch"}, "built in: playground, before, after"},
		{[]string{"run", "before", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"run"}, "want one scenario"},
		{[]string{"run", "before", "--workers", "1"}, "names worker B"},
		{[]string{"run", "before", "--leasing=maybe"}, "invalid boolean value"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"list", "x"}, "list takes no arguments"},
		{[]string{"--scenario", "before"}, "needs a terminal"},
		// Too large for the lab, said before the screen (or the want of one) is considered.
		{[]string{"--messages", "100000", "--workers", "2"}, "100000 messages, more than the 5000 a session may hold (the lab reads and draws every row"},
		{[]string{"--scenario", "many-workers", "--messages", "5001"}, `for more, use "leaselab run" or "leaselab stress"`},
		{[]string{"run", "before", "--workers", "0"}, "--workers 0: want at least 1"},
		{[]string{"run", "before", "--lease", "0s"}, "--lease 0s: want a positive duration"},
		{[]string{"run", "before", "--compare", "--fencing=true"}, "--compare sets --leasing and --fencing itself"},
		{[]string{"stress", "--crash-rate", "2"}, "--crash-rate 2: want 0 to 0.5"},
		{[]string{"stress", "--crash-rate", "NaN"}, "--crash-rate NaN: want 0 to 0.5"},
		{[]string{"stress", "--jump-rate", "-1"}, "--jump-rate -1: want 0 to 0.5"},
		{[]string{"stress", "--timeout", "0s"}, "--timeout 0s"},
		{[]string{"seed"}, "--db FILE is required"},
		{[]string{"worker", "--db", "x.db"}, "--name is required"},
		{[]string{"worker", "--db", "x.db", "--name", "A B"}, `--name "A B"`},
		{[]string{"watch"}, "--db"},
	}
	for _, c := range cases {
		code, _, stderr := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

func TestBadScenarioFileNamesFileAndLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.scenario")
	os.WriteFile(path, []byte("name: mine\nworkers: A B\nlease: fast\n"), 0o644)
	code, _, stderr := cli(t, "run", path, "--report-dir", "")
	if code != exitUsage || !strings.Contains(stderr, path+":3: bad duration for lease") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestDatabaseNotOursExit3AndUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	content := []byte("my notes\n")
	os.WriteFile(path, content, 0o644)
	code, out, stderr := cli(t, "run", "before", "--db", path, "--report-dir", "")
	if code != exitEnvError || !strings.Contains(stderr, path) || strings.Count(stderr, "\n") != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 3 and one line naming the path", code, out, stderr)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, content) {
		t.Fatal("the file was changed")
	}
}

func TestDatabaseUnwritableExit3(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(file, nil, 0o644)
	path := filepath.Join(file, "leaselab.db")
	code, _, stderr := cli(t, "run", "before", "--db", path, "--report-dir", "")
	if code != exitEnvError || !strings.Contains(stderr, path) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestDBFlagKeepsTheDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kept.db")
	if code, _, stderr := cli(t, "run", "after", "--db", path, "--report-dir", ""); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("--db file not kept: %v", err)
	}
	// A second run on the same file, allowed to reset it, gives the same figures.
	code, out, _ := cli(t, "run", "after", "--db", path, "--report-dir", "", "--json", "--reset")
	if code != exitOK || !strings.Contains(out, `"processing_attempts": 6`) {
		t.Fatalf("second run: exit %d", code)
	}
}

func TestExpectationsNotMetExit1(t *testing.T) {
	// before declares what happens with leasing on too: each message once.
	code, _, _ := cli(t, "run", "before", "--leasing=true", "--report-dir", "")
	if code != exitOK {
		t.Fatalf("before --leasing=true: exit %d, want 0 (it declares that case)", code)
	}
	// A scenario whose expectation the run does not meet exits 1.
	path := filepath.Join(t.TempDir(), "strict.scenario")
	os.WriteFile(path, []byte("name: strict\nleasing: off\nexpect:\n  processed_more_than_once = 0\n"), 0o644)
	if code, _, _ := cli(t, "run", path, "--report-dir", ""); code != exitExpect {
		t.Fatalf("unmet expectation: exit %d, want 1", code)
	}
}

// A script step that cannot be carried out is a scenario error (exit 2), naming file:line.
func TestScriptErrorExit2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.scenario")
	os.WriteFile(path, []byte("name: bad\nmessages: 1\nsteps:\n  A claim PAY-999\n"), 0o644)
	code, _, stderr := cli(t, "run", path, "--report-dir", "")
	if code != exitUsage || !strings.Contains(stderr, path+":4:") {
		t.Fatalf("exit %d, stderr %q; want 2 naming %s:4", code, stderr, path)
	}
}

func TestMainHelpListsCommands(t *testing.T) {
	code, out, _ := cli(t, "--help")
	for _, cmd := range []string{"run NAME|FILE", "list", "stress", "seed --db", "worker --db", "watch"} {
		if code != exitOK || !strings.Contains(out, cmd) {
			t.Errorf("leaselab --help (exit %d) does not list %q", code, cmd)
		}
	}
}

func TestListAndHelp(t *testing.T) {
	code, out, _ := cli(t, "list")
	if code != exitOK || !strings.Contains(out, "before") || !strings.Contains(out, "after") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	for _, cmd := range []string{"run", "list", "lab", "stress", "seed", "worker", "watch"} {
		code, _, stderr := cli(t, cmd, "--help")
		if code != exitOK || !strings.Contains(stderr, "Usage: leaselab") {
			t.Errorf("%s --help: exit %d, %q", cmd, code, stderr)
		}
	}
}

// Three worker processes share one database file; one is killed with SIGKILL while it holds a
// finalize transaction open. The database stays sound, its lease is reclaimed after expiry by
// another process, and every message is finalized exactly once.
func TestWorkerProcessesSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and waits for a lease to expire")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "shared.db")
	const messages = 30
	seedDB(t, path, messages)
	common := []string{"worker", "--db", path, "--lease", "1s", "--poll", "10ms", "--pace", "2ms"}
	victim := start(t, append(common, "--name", "P2", "--hold-finalize", "30s")...)
	held := victim.waitMatch(t, regexp.MustCompile(`holding its finalize transaction of (PAY-\d+)`), 30*time.Second)[1]
	p1 := start(t, append(common, "--name", "P1")...)
	p3 := start(t, append(common, "--name", "P3")...)
	time.Sleep(50 * time.Millisecond) // let them queue behind the victim's write lock
	victim.kill(t)
	for _, c := range []*child{p1, p3} {
		c.finish(t, 60*time.Second)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if ok, err := db.IntegrityCheck(ctx); ok != "ok" || err != nil {
		t.Fatalf("integrity_check = %q %v", ok, err)
	}
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.OutboxProcessed != messages || c.PaymentsPending != 0 {
		t.Fatalf("processed %d of %d, payments pending %d", c.OutboxProcessed, messages, c.PaymentsPending)
	}
	logs := victim.output() + "\n" + p1.output() + "\n" + p3.output()
	if !regexp.MustCompile(`Worker-P[13] reclaimed ` + held + ` from Worker-P2`).MatchString(logs) {
		t.Fatalf("nobody reclaimed %s from the killed Worker-P2:\n%s", held, logs)
	}
	finalizedOnce(t, logs, messages)
	if t.Failed() {
		t.Fatalf("logs:\n%s", logs)
	}
}

// leaselab stress: a passing run prints the table with every column and exits 0 (here with the
// fair write-lock queue); a run without leasing finds duplicates, exits 1 and prints the command
// that reproduces its conditions.
func TestStressCommand(t *testing.T) {
	code, out, stderr := cli(t, "stress", "--workers", "4", "--messages", "200", "--runs", "2", "--fair-lock")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s\n%s", code, stderr, out)
	}
	containsAll(t, "the stress table", out, "least share", "finalized 2+", "total", "pass")
	code, out, _ = cli(t, "stress", "--workers", "4", "--messages", "200", "--leasing=false", "--crash-rate", "0")
	if code != exitExpect || !strings.Contains(out, "finalized more than once") ||
		!strings.Contains(out, "reproduce: leaselab stress --workers 4 --messages 200") || !strings.Contains(out, "--fair-lock=false") {
		t.Fatalf("stress --leasing=false: exit %d\n%s", code, out)
	}
}
