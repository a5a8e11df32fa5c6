package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"
)

// inputFile writes text to dir/name and returns a setup's (args, file) for "run FILE" plus the
// extra arguments.
func inputFile(name, text string, extra ...string) func(t *testing.T, dir string) ([]string, string) {
	return func(t *testing.T, dir string) ([]string, string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return append([]string{"run", path, "--report-dir", ""}, extra...), path
	}
}

// bigScript is 3,900 lines of "A step 100000": 62 KB that asked for 390 million actions.
func bigScript() string {
	var b strings.Builder
	b.WriteString("name: big\nsteps:\n")
	for i := 0; i < 3900; i++ {
		b.WriteString("  A step 100000\n")
	}
	return b.String()
}

// A small scenario that passes; its line ends and BOM vary.
const passing = "name: ends\nmessages: 2\nsteps:\n  run\nexpect:\n  outbox.processed = 2\n"

// fifo makes a named pipe as the scenario file. A guard opens it for writing after 10 s, so
// that a reader blocked on it (the bug) fails the test instead of hanging it.
func fifo(t *testing.T, dir string) ([]string, string) {
	t.Helper()
	path := filepath.Join(dir, "f.scenario")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		select {
		case <-stop:
		case <-time.After(10 * time.Second):
			if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
	}()
	return []string{"run", path, "--report-dir", ""}, ""
}

func TestHostileInput(t *testing.T) {
	runHostile(t, "scenario input", []hostileCase{
		{name: "scenario file over 64 KiB", setup: inputFile("huge.scenario", "name: huge\n# "+strings.Repeat("x", 70<<10)+"\n"),
			code: exitUsage, msg: "file too large", unchanged: true},
		{name: "3,900 lines of A step 100000 (62 KB)", setup: inputFile("big.scenario", bigScript()),
			code: exitUsage, msg: "big.scenario:4: the script's steps ask for 200000 worker actions", unchanged: true},
		{name: "A step 100001", setup: inputFile("s.scenario", "name: s\nsteps:\n  A step 100001\n"),
			code: exitUsage, msg: "s.scenario:3: A step: bad count", unchanged: true},
		{name: "messages: 1000000 in a file", setup: inputFile("m.scenario", "name: m\nmessages: 1000000\n"),
			code: exitUsage, msg: "m.scenario:2: bad messages", unchanged: true},
		{name: "--messages 1000000 on run", setup: args("run", "after", "--messages", "1000000", "--report-dir", ""),
			code: exitUsage, msg: "1000000 messages: a scenario runs at most 100000"},
		{name: "messages: 100000 with workers: 64", setup: inputFile("w.scenario", "name: w\nmessages: 100000\nworkers: 64\n"),
			code: exitUsage, msg: "w.scenario:3: 100000 messages × 64 workers = 6400000 worker-messages, more than the 200000", unchanged: true},
		{name: "--workers 64 --messages 10000 on run", setup: args("run", "after", "--workers", "64", "--messages", "10000", "--report-dir", ""),
			code: exitUsage, msg: "--messages 10000 --workers 64: 10000 messages × 64 workers"},
		{name: "run crash-rate=0.5 pause-rate=0.5", setup: inputFile("r.scenario", "name: r\nsteps:\n  run random crash-rate=0.5 pause-rate=0.5\n"),
			code: exitUsage, msg: "r.scenario:3: run: crash-rate + pause-rate is 1", unchanged: true},
		{name: "run crash-rate=NaN", setup: inputFile("r.scenario", "name: r\nsteps:\n  run crash-rate=NaN\n"),
			code: exitUsage, msg: "r.scenario:3: run: bad crash-rate", unchanged: true},
		{name: "a run that renews for ever (livelock)", setup: inputFile("hb.scenario",
			"name: hb\nmessages: 1\nworkers: A\nlease: 2ms\nheartbeat: on\nheartbeat-every: 1ms\nslow: A 24h\nsteps:\n  run until-done\n"),
			code: exitExpect, msg: "hb.scenario:9: the run made no progress: no message finalized or parked in the last 10000 actions (0 finalized in all): the workers renewed their leases", unchanged: true},
		{name: "a FIFO as the scenario file", setup: fifo, code: exitUsage, msg: "is a named pipe (FIFO), not a regular file"},
		{name: "a directory as the scenario file", setup: inDir("run", "DIR", "--report-dir", ""), code: exitUsage, msg: "is a directory, not a regular file"},
		{name: "/dev/null as the scenario file", setup: args("run", "/dev/null", "--report-dir", ""),
			code: exitUsage, msg: "is a character device"},
		{name: "UTF-8 BOM", setup: inputFile("bom.scenario", "\uFEFF"+passing), code: exitOK, msg: "The run did what the scenario expects", unchanged: true},
		{name: "CRLF line ends", setup: inputFile("crlf.scenario", strings.ReplaceAll(passing, "\n", "\r\n")),
			code: exitOK, msg: "The run did what the scenario expects", unchanged: true},
		{name: "CR-only line ends", setup: inputFile("cr.scenario", strings.ReplaceAll(passing, "\n", "\r")),
			code: exitOK, msg: "The run did what the scenario expects", unchanged: true},
		{name: "CR-only file with an error names its line", setup: inputFile("cr.scenario", "name: x\rmessages: many\r"),
			code: exitUsage, msg: "cr.scenario:2: bad messages", unchanged: true},
	})
}

func TestHostileLeaseRange(t *testing.T) {
	runHostile(t, "lease range", []hostileCase{
		{name: "run --lease 999999h", setup: args("run", "after", "--lease", "999999h", "--report-dir", ""),
			code: exitUsage, msg: "--lease 999999h0m0s: 999999h0m0s is out of range: a lease is 1ms to 24h"},
		{name: "run --lease 2500us", setup: args("run", "after", "--lease", "2500us", "--report-dir", ""),
			code: exitUsage, msg: "is finer than a millisecond"},
		{name: "run --lease 1ms (the range's low end)", setup: inputFile("one.scenario", passing, "--lease", "1ms"),
			code: exitOK, msg: "lease=1ms"},
		{name: "stress --lease 999999h", setup: args("stress", "--lease", "999999h"),
			code: exitUsage, msg: "is out of range: a lease is 1ms to 24h"},
		{name: "worker --lease 2500us", setup: func(t *testing.T, dir string) ([]string, string) {
			return []string{"worker", "--db", filepath.Join(dir, "none.db"), "--name", "W", "--lease", "2500us"}, filepath.Join(dir, "none.db")
		}, code: exitUsage, msg: "--lease 2.5ms: 2.5ms is finer than a millisecond", unchanged: true},
		{name: "worker --lease 999999h", setup: func(t *testing.T, dir string) ([]string, string) {
			return []string{"worker", "--db", filepath.Join(dir, "none.db"), "--name", "W", "--lease", "999999h"}, filepath.Join(dir, "none.db")
		}, code: exitUsage, msg: "is out of range: a lease is 1ms to 24h", unchanged: true},
		{name: "worker --lease 1ms --heartbeat", setup: func(t *testing.T, dir string) ([]string, string) {
			return []string{"worker", "--db", filepath.Join(dir, "none.db"), "--name", "W", "--lease", "1ms", "--heartbeat"}, filepath.Join(dir, "none.db")
		}, code: exitUsage, msg: "with the heartbeat on, heartbeat-every (1ms) must be at least 1ms and shorter than the lease", unchanged: true},
		{name: "lease: 25h in a file", setup: inputFile("l.scenario", "name: l\nlease: 25h\n"),
			code: exitUsage, msg: "l.scenario:2: bad duration for lease: 25h0m0s is out of range", unchanged: true},
		{name: "lease: 2500us in a file", setup: inputFile("l.scenario", "name: l\nlease: 2500us\n"),
			code: exitUsage, msg: "l.scenario:2: bad duration for lease: 2.5ms is finer than a millisecond", unchanged: true},
		{name: "lease: 1ms in a file (no heartbeat)", setup: inputFile("l.scenario", "name: l\nlease: 1ms\nmessages: 2\nsteps:\n  run\nexpect:\n  outbox.processed = 2\n"),
			code: exitOK, msg: "lease=1ms", unchanged: true},
		{name: "lease: 1ms with heartbeat: on", setup: inputFile("l.scenario", "name: l\nlease: 1ms\nheartbeat: on\n"),
			code: exitUsage, msg: "l.scenario:3: a 1ms lease leaves no room for the heartbeat", unchanged: true},
		{name: "set lease 2500us in a script", setup: inputFile("l.scenario", "name: l\nsteps:\n  set lease 2500us\n"),
			code: exitUsage, msg: "l.scenario:3: bad duration for lease", unchanged: true},
	})
}

func TestHostileControlCharacters(t *testing.T) {
	field := func(line string) func(t *testing.T, dir string) ([]string, string) {
		return inputFile("c.scenario", "name: c\nworkers: A\n"+line+"\n")
	}
	runHostile(t, "control characters", []hostileCase{
		{name: "ESC in title:", setup: field("title: \x1b]0;owned\x07Lesson"), code: exitUsage,
			msg: `c.scenario:3: control character ESC (U+001B) in "title:"`, unchanged: true},
		{name: "BEL in explain:", setup: field("explain: ding\x07"), code: exitUsage,
			msg: `c.scenario:3: control character BEL (U+0007) in "explain:"`, unchanged: true},
		{name: "NUL in verdict-pass:", setup: field("verdict-pass: ok\x00"), code: exitUsage,
			msg: `c.scenario:3: control character NUL (U+0000) in "verdict-pass:"`, unchanged: true},
		{name: "C1 CSI in verdict-fail:", setup: field("verdict-fail: \u009b2Jgone"), code: exitUsage,
			msg: `c.scenario:3: control character CSI (U+009B) in "verdict-fail:"`, unchanged: true},
		{name: "ESC in worker: id=", setup: field("worker: A2 id=Worker-\x1b[2JA"), code: exitUsage,
			msg: `c.scenario:3: control character ESC (U+001B) in "worker:"`, unchanged: true},
		{name: "bidi override in title:", setup: field("title: \u202eevil"), code: exitUsage,
			msg: `c.scenario:3: control character U+202E in "title:"`, unchanged: true},
		{name: "a LockedBy with ESC and BEL written into the --db file", setup: hostileLockedBy,
			code: exitOK, msg: `Evil\x1b]0;pwned\x07\x1b[2J`},
	})
}

// hostileLockedBy seeds a shared database, then lets a foreign "process" claim PAY-001 under a
// LockedBy full of terminal escapes, for 2 s; a worker process is then blocked by it and
// reclaims it, printing that LockedBy. The lease is long enough that a worker started on a busy
// machine still meets it live (with 300 ms, one started late found it expired, and was never
// blocked).
func hostileLockedBy(t *testing.T, dir string) ([]string, string) {
	t.Helper()
	path := seeded(t, dir, "shared.db", 2)
	// The foreign process: a connection of its own, closed once it has claimed.
	ctx := context.Background()
	var conn engine.Conn
	db, err := store.Open(ctx, path)
	if err == nil {
		defer db.Close()
		conn, err = db.Connect(ctx)
	}
	if err == nil {
		defer conn.Close()
		now := time.Now()
		_, err = conn.Claim(ctx, engine.ClaimRequest{Worker: "Evil\x1b]0;pwned\x07\x1b[2J", Now: now, Until: now.Add(2 * time.Second)})
	}
	if err != nil {
		t.Fatalf("the foreign claim: %v", err)
	}
	return []string{"worker", "--db", path, "--name", "W1", "--poll", "20ms"}, ""
}

// No terminal escape read from a database reaches stdout: the worker prints the LockedBy that
// blocked it, escaped.
func TestWorkerPrintsForeignLockedByEscaped(t *testing.T) {
	args, _ := hostileLockedBy(t, t.TempDir())
	code, out, stderr := cli(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ContainsAny(out+stderr, "\x1b\x07") {
		t.Fatalf("raw control characters reached the output:\n%q", out)
	}
	if !strings.Contains(out, `leased by Evil\x1b]0;pwned\x07\x1b[2J`) || !strings.Contains(out, "reclaimed") {
		t.Fatalf("output does not show the escaped LockedBy and the reclaim:\n%s", out)
	}
}

// A run the watchdog ends prints its report (the table, the ledgers) and saves it with the
// reason, then exits 1: not a hang, not a usage error.
func TestStalledRunPrintsItsReport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hb.scenario")
	text := "name: hb\nmessages: 1\nworkers: A\nlease: 2ms\nheartbeat: on\nheartbeat-every: 1ms\nslow: A 24h\nsteps:\n  run until-done\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := cli(t, "run", path, "--report-dir", filepath.Join(dir, "reports"))
	if code != exitExpect || !strings.Contains(stderr, "the run made no progress") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	containsAll(t, "stdout", out, "== Ledgers", "Claims won         1", "== Verdict ==", "DID NOT FINISH: "+path+":9: the run made no progress", "Report saved: ")
	saved, _ := filepath.Glob(filepath.Join(dir, "reports", "hb-RunReport-*.txt"))
	if len(saved) != 1 {
		t.Fatalf("saved reports: %v", saved)
	}
	if data, err := os.ReadFile(saved[0]); err != nil || !strings.Contains(string(data), "DID NOT FINISH") {
		t.Errorf("the saved report does not say why the run ended (%v)", err)
	}
}

// askScenario writes a scenario file whose script holds lines, and returns the command line
// that runs it.
func askScenario(lines string) func(t *testing.T, dir string) ([]string, string) {
	return func(t *testing.T, dir string) ([]string, string) {
		f := filepath.Join(dir, "q.scenario")
		body := "name: q\nworkers: A B\nsteps:\n  A claim PAY-001\n" + lines
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{"run", f, "--report-dir", ""}, f
	}
}

// askCase is the hostile case name: a scenario whose script holds lines (askScenario), which
// exits code with msg and leaves the file as it was.
func askCase(name, lines string, code int, msg string) hostileCase {
	return hostileCase{name: name, setup: askScenario(lines), code: code, msg: msg, unchanged: true}
}

// Questions in a scenario file: every bad one is a file:line error, exit 2, the file untouched.
func TestHostileQuestions(t *testing.T) {
	runHostile(t, "questions", []hostileCase{
		askCase("ask: with no right answer", "  ask: Who? | A | B\n  B claim PAY-001\n", exitUsage, "q.scenario:5: ask: which answer is right?"),
		askCase("ask: whose right answer is not an answer", "  ask: Who? | A | B = C\n  B claim PAY-001\n", exitUsage, "q.scenario:5: ask: the right answer \"C\" is not one of the answers (A, B)"),
		askCase("ask: with five answers", "  ask: Who? | a | b | c | d | e = a\n  B claim PAY-001\n", exitUsage, "q.scenario:5: ask: 5 answers, at most 4"),
		askCase("ask: with no step after it", "  ask: Who? | A | B = A\n", exitUsage, "q.scenario:5: ask: no step follows this question"),
		askCase("because: with no ask: before it", "  because: why\n", exitUsage, "q.scenario:5: because: comes right after an \"ask:\" line"),
		askCase("a good question is ignored by run", "  ask: Who? | A | B = B\n  because: why.\n  run until-done\n", exitOK, ""),
	})
}
