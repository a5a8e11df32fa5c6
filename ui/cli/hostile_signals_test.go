package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var signalCases = []struct {
	sig  syscall.Signal
	name string
	code int
}{
	{syscall.SIGINT, "SIGINT", 130},
	{syscall.SIGTERM, "SIGTERM", 143},
	{syscall.SIGHUP, "SIGHUP", 129},
	{syscall.SIGQUIT, "SIGQUIT", 131},
}

// A run interrupted by any of the signals that end a terminal session removes its temporary
// folder and exits 128 + the signal's number with "interrupted", never 3 with "context
// canceled". Today SIGHUP and SIGQUIT kill it on the spot and leave leaselab-run-* behind.
func TestSignalsEndRunCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, c := range signalCases {
		t.Run(c.name, func(t *testing.T) {
			p := startWithTmp(t, "run", "many-workers", "--messages", "2000", "--report-dir", "")
			p.waitFor(t, "made its database", p.madeItsDatabase)
			time.Sleep(300 * time.Millisecond) // well into the run
			if err := p.cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			code, stderr := p.exit(t), p.err.String()
			if code != c.code || !strings.Contains(stderr, "interrupted by "+c.name) || strings.Contains(stderr, "context canceled") {
				t.Errorf("exit %d, stderr %q; want %d and \"interrupted by %s\"", code, stderr, c.code, c.name)
			}
			if left := p.runFolders(); len(left) > 0 {
				t.Errorf("temporary folders left behind: %v", left)
			}
			if !t.Failed() {
				recordReliability(t, "signals", fmt.Sprintf("%s during `run many-workers --messages 2000`", c.name),
					code, firstLine(stderr), "temporary folder removed")
			}
		})
	}
}

// stress --runs 50 interrupted prints the table of the runs that finished, and the folders of
// every run, finished or not, are gone.
func TestSignalsEndStressWithTheTableOfFinishedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, c := range []struct {
		sig  syscall.Signal
		name string
		code int
	}{signalCases[0], signalCases[2]} {
		t.Run(c.name, func(t *testing.T) {
			p := startWithTmp(t, "stress", "--messages", "200", "--workers", "2", "--runs", "50")
			seen := map[string]bool{}
			p.waitFor(t, "started its second run", func() bool {
				for _, f := range p.runFolders() {
					seen[f] = true
				}
				return len(seen) >= 2
			})
			if err := p.cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := p.exit(t), p.stdout.String(), p.err.String()
			m := regexp.MustCompile(`interrupted: (\d+) of 50 runs finished`).FindStringSubmatch(stdout)
			if code != c.code || !strings.Contains(stderr, "interrupted by "+c.name) || strings.Contains(stderr, "context canceled") {
				t.Errorf("exit %d, stderr %q; want %d and \"interrupted by %s\"", code, stderr, c.code, c.name)
			}
			if m == nil || m[1] == "0" || !strings.Contains(stdout, "least share") {
				t.Errorf("no table of the finished runs:\n%s", stdout)
			}
			if left := p.runFolders(); len(left) > 0 {
				t.Errorf("temporary folders left behind: %v", left)
			}
			if !t.Failed() {
				recordReliability(t, "signals", fmt.Sprintf("%s during `stress --runs 50`", c.name), code,
					firstLine(stderr)+", after the table of the runs that finished ("+m[1]+")", "temporary folders removed")
			}
		})
	}
}

// waitGone waits up to 10 s for pid, a process this test did not start (no Wait), to end: gone,
// or a zombie its parent has yet to reap. Then it sends SIGKILL and reports the process.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	if !poll(10*time.Second, 20*time.Millisecond, func() bool { return pidGone(pid) }) {
		err := syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("process %d still running 10s after the tmux server was killed; SIGKILL: %v", pid, err)
	}
}

// pidGone reports whether pid has ended: no such process, or a zombie.
func pidGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state …: comm may hold spaces and parentheses, the state follows the last ")".
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// A context cancelled by a signal is reported as the interrupt, whatever error the command
// returned on the way out (today: exit 3, "context canceled").
func TestInterruptIsNotAnEnvironmentError(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(interrupted{syscall.SIGINT})
	var out, errb bytes.Buffer
	code := Main(ctx, []string{"run", "after", "--report-dir", ""}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, backends())
	if code != 130 || errb.String() != "leaselab: interrupted by SIGINT\n" {
		t.Fatalf("exit %d, stderr %q; want 130 and one line \"interrupted by SIGINT\"", code, errb.String())
	}
}

// Exit codes and messages that are not signals: the stress timeout, the report that cannot be
// saved, help with an argument.
func TestHostileExitCodes(t *testing.T) {
	notAFolder := func(t *testing.T, dir string) ([]string, string) {
		f := filepath.Join(dir, "reports")
		os.WriteFile(f, []byte("not a folder\n"), 0o644)
		return []string{"run", "after", "--report-dir", f}, f
	}
	runHostile(t, "exit codes", []hostileCase{
		{name: "`help extra`", code: exitUsage, msg: "help extra: want",
			setup: args("help", "extra")},
		{name: "`stress --timeout 1ns` (the timeout covers the seeding)", code: exitExpect, msg: "messages unfinished (timeout)",
			setup: args("stress", "--timeout", "1ns", "--messages", "50", "--workers", "2")},
		{name: "`--report-dir` names a file", code: exitEnvError, msg: "not a folder", unchanged: true, setup: notAFolder},
		{name: "`--report-dir` is a dangling symbolic link", code: exitEnvError, msg: "which does not exist",
			setup: func(t *testing.T, dir string) ([]string, string) {
				link := filepath.Join(dir, "reports")
				os.Symlink(filepath.Join(dir, "gone"), link)
				return []string{"run", "after", "--report-dir", link}, ""
			}},
		{name: "`run --compare --report-dir` names a file", code: exitEnvError, msg: "not a folder", unchanged: true,
			setup: func(t *testing.T, dir string) ([]string, string) {
				args, f := notAFolder(t, dir)
				return append(args, "--compare"), f
			}},
	})
}

// A run whose report cannot be saved still prints it (text or JSON), then the error: exit 3.
// Today the error alone is printed and the run's figures are lost.
func TestReportPrintedWhenItCannotBeSaved(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "reports")
	os.WriteFile(file, nil, 0o644)
	link := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), link)
	for _, c := range []struct {
		args      []string
		out, errs string
	}{
		{[]string{"run", "after", "--report-dir", file}, "== Verdict ==", "--report-dir " + file + ": not a folder"},
		{[]string{"run", "after", "--json", "--report-dir", file}, `"processing_attempts": 6`, "not a folder"},
		{[]string{"run", "after", "--report-dir", link}, "== Verdict ==", "a symbolic link to " + filepath.Join(dir, "nowhere") + ", which does not exist"},
		{[]string{"run", "after", "--compare", "--report-dir", file}, "leasing+fencing", "not a folder"},
	} {
		code, out, stderr := cli(t, c.args...)
		if code != exitEnvError || !strings.Contains(out, c.out) || !strings.Contains(stderr, c.errs) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, stdout has %q: %v; want 3, the report, then the error",
				c.args, code, stderr, c.out, strings.Contains(out, c.out))
		}
		if strings.Contains(out, "Report saved") {
			t.Errorf("%v: claims a report was saved", c.args)
		}
	}
}

// A read-only report folder or working folder: the report is printed, then the error, exit 3.
func TestReportPrintedWhenTheFolderIsReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only folders")
	}
	ro := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(ro, 0o555)
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	code, out, stderr := cli(t, "run", "after", "--report-dir", ro)
	if code != exitEnvError || !strings.Contains(out, "== Verdict ==") || !strings.Contains(stderr, "permission denied") {
		t.Errorf("read-only --report-dir: exit %d, stderr %q", code, stderr)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(ro); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code, out, stderr = cli(t, "run", "after") // reports/ in the working folder
	if code != exitEnvError || !strings.Contains(out, "== Verdict ==") || !strings.Contains(stderr, "--report-dir reports") {
		t.Errorf("read-only working folder: exit %d, stderr %q", code, stderr)
	}
}

// Reports saved in the same millisecond get names of their own: today the second overwrites the
// first (16 parallel runs wrote 14 files).
func TestReportNamesNeverCollide(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 12, 1, 9, 0, 0, 123_000_000, time.UTC)
	const n = 16
	paths := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if paths[i], err = saveReport(dir, "after", at, fmt.Sprintf("report %d\n", i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	files, _ := filepath.Glob(filepath.Join(dir, "after-RunReport-20261201T090000123Z*.txt"))
	if len(files) != n {
		t.Fatalf("%d reports saved in one millisecond gave %d files: %v", n, len(files), files)
	}
	for i, p := range paths {
		if b, _ := os.ReadFile(p); string(b) != fmt.Sprintf("report %d\n", i) {
			t.Errorf("%s holds %q, not report %d", p, b, i)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", p, fi.Mode().Perm(), err)
		}
	}
}

// The same through the command line: 16 parallel "run after --report-dir R" write 16 reports.
func TestParallelRunsWriteEveryReport(t *testing.T) {
	if testing.Short() {
		t.Skip("16 runs")
	}
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, _, stderr := cli(t, "run", "after", "--report-dir", dir); code != exitOK {
				t.Errorf("exit %d: %s", code, stderr)
			}
		}()
	}
	wg.Wait()
	files, _ := filepath.Glob(filepath.Join(dir, "after-RunReport-*.txt"))
	if len(files) != n {
		t.Fatalf("%d parallel runs wrote %d reports", n, len(files))
	}
	recordReliability(t, "files", "16 parallel `run after --report-dir R`", exitOK, fmt.Sprintf("%d reports written", len(files)), "—")
}

// The lab in a real terminal (tmux) hung up on, as a closed terminal or a dropped ssh does
// (SIGHUP): it must remove its temporary folder on the way out and exit 129. Today it is killed
// on the spot and leaves leaselab-run-* (about 6 MB) behind. (tmux kill-server, a closed
// terminal, does the same; the pane is kept here so that its exit status can be read.)
func TestHangUpCleansUpTheLab(t *testing.T) {
	tmux := testTmux(t, "the lab")
	tmp := t.TempDir()
	statusFile := filepath.Join(t.TempDir(), "status")
	// Registered after every folder is made, so it runs before their removal: the tmux server
	// goes, and the lab in its pane is waited for, before anything it writes into is removed.
	t.Cleanup(func() {
		pid, _ := tmux("display-message", "-p", "-t", "lab", "#{pane_pid}")
		tmux("kill-server")
		if n, err := strconv.Atoi(pid); err == nil && n > 0 {
			waitGone(t, n)
		}
	})
	cmd := paneCommand(statusFile, tmp, "")
	if _, err := tmux("new-session", "-d", "-s", "lab", "-x", "120", "-y", "40", cmd); err != nil {
		t.Fatalf("tmux: %v", err)
	}
	tmux("set-option", "-t", "lab", "remain-on-exit", "on")
	p := &signalled{tmp: tmp}
	if !poll(30*time.Second, 10*time.Millisecond, p.madeItsDatabase) {
		t.Fatal("the lab never made its database")
	}
	time.Sleep(500 * time.Millisecond) // on screen
	pid, err := tmux("display-message", "-p", "-t", "lab", "#{pane_pid}")
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("kill", "-HUP", pid).Run(); err != nil {
		t.Fatalf("kill -HUP %s: %v", pid, err)
	}
	// The child writes its exit code as it exits: tmux may take many seconds to reap it.
	var status string
	if !poll(20*time.Second, 10*time.Millisecond, func() bool {
		b, err := os.ReadFile(statusFile)
		status = string(b)
		return err == nil && status != ""
	}) {
		t.Fatal("the lab did not end after SIGHUP")
	}
	if left := p.runFolders(); len(left) > 0 || status != "129" {
		t.Fatalf("after SIGHUP: exit status %s (want 129), left behind %v", status, left)
	}
	recordReliability(t, "signals", "SIGHUP to the lab in a terminal (tmux)", 129, "the lab ends (its screen is gone)",
		"temporary folder removed")
}

// A worker process whose pace is at least its lease would give up every message it claims
// (its lease is over by its provider call) and claim it again, for ever: refused up front.
func TestHostileWorkerPace(t *testing.T) {
	runHostile(t, "wall clock", []hostileCase{
		{name: "`worker --lease 100ms --pace 200ms`", code: exitUsage, msg: "--pace 200ms: want less than --lease 100ms",
			setup: inDir("worker", "--db", "DIR/x.db", "--name", "P1", "--lease", "100ms", "--pace", "200ms")},
	})
}

// "leaselab worker … | head -n 3": the worker stops as on any other stop signal, finishes the
// message it holds, and exits 141 with a line on stderr. Today SIGPIPE kills it on its next
// line (exit status "signal: broken pipe"), with a row left Processing under its lease.
func TestClosedOutputEndsWorkerCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	db := seeded(t, dir, "pay.db", 40)
	p := startPiped(t, t.TempDir(), false, "worker", "--db", db, "--name", "P1", "--lease", "2s", "--pace", "20ms")
	p.head(t, 3)
	p.r.Close() // head exits
	code, stderr := p.exit(t), p.stderr.String()
	if code != 141 || !strings.Contains(stderr, "interrupted by SIGPIPE (its output was closed)") {
		t.Fatalf("exit %d (%v), stderr %q; want 141 and \"interrupted by SIGPIPE\"", code, p.cmd.ProcessState, stderr)
	}
	var processing, processed int
	if err := rawQueryRow(db, `SELECT count(*) FILTER (WHERE Status = 'Processing'), count(*) FILTER (WHERE Status = 'Processed') FROM OutboxMessages`, &processing, &processed); err != nil {
		t.Fatal(err)
	}
	if processing != 0 || processed == 0 {
		t.Fatalf("after the worker stopped: %d rows Processing (want 0, the one it held finished), %d Processed", processing, processed)
	}
	recordReliability(t, "signals", "`worker --db FILE | head -n 3` (SIGPIPE)", code, firstLine(stderr),
		"no row left Processing: the message it held was finished")
}

// "leaselab serve 2>&1 | head -n 5" with a lab open: the next log line finds its output closed;
// the server stops as on SIGTERM (the attendee is told, the lab's temporary folder removed) and
// exits 141. Today SIGPIPE kills it there: the attendee is cut off and the folder left behind.
func TestClosedOutputEndsServeCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	tmp := t.TempDir()
	keyPath := filepath.Join(t.TempDir(), "key")
	p := startPiped(t, tmp, true, "serve", "--listen", "127.0.0.1:0", "--host-key", keyPath)
	head := strings.Join(p.head(t, 3), "\n")
	addr := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`).FindStringSubmatch(head)
	if addr == nil {
		t.Fatalf("start-up lines: %s", head)
	}
	// head -n 5 reads on, up to two more lines (the rest of the banner, a log line) until it
	// exits below.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for n := 0; n < 2 && p.lines.Scan(); n++ {
		}
	}()
	ts := servedAt(t, addr[1], keyPath, tmp)
	a := ts.connect(t, dialOpts{})
	a.waitFor("PAY-006")
	p.r.Close() // head exits
	<-drained
	if left, _ := filepath.Glob(filepath.Join(tmp, "leaselab-*")); len(left) != 1 {
		t.Fatalf("the open lab's folder: %v", left)
	}
	b := ts.connect(t, dialOpts{user: "second"}) // its log line meets the closed pipe
	code := p.exit(t)
	if code != 141 {
		t.Errorf("exit %d (%v), want 141", code, p.cmd.ProcessState)
	}
	a.exit()
	b.hangUp()
	if !strings.Contains(a.out.String(), "the server is shutting down") {
		t.Errorf("the attendee was not told the server is shutting down")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if !t.Failed() {
		recordReliability(t, "signals", "`serve 2>&1 | head -n 5` with a lab open (SIGPIPE)", code,
			"the attendee is told the server is shutting down", "temporary folder removed")
	}
}

// Two Ctrl-C 1 ms apart: the second ends the run at once, as before, but its temporary folder
// (payment data) goes with it. Today the second kills it on the spot and leaves the folder.
func TestDoubleInterruptRemovesTheRunFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	p := startWithTmp(t, "run", "many-workers", "--messages", "2000", "--report-dir", "")
	p.waitFor(t, "made its database", p.madeItsDatabase)
	time.Sleep(200 * time.Millisecond)
	p.cmd.Process.Signal(os.Interrupt)
	time.Sleep(time.Millisecond)
	p.cmd.Process.Signal(os.Interrupt)
	code, stderr := p.exit(t), p.err.String()
	if code != 130 {
		t.Errorf("exit %d (%v), stderr %q; want 130", code, p.cmd.ProcessState, stderr)
	}
	if left := p.runFolders(); len(left) > 0 {
		t.Errorf("temporary folders left behind: %v", left)
	}
	if !t.Failed() {
		recordReliability(t, "signals", "two SIGINT 1 ms apart during `run many-workers --messages 2000`", code,
			lastLine(stderr), "temporary folder removed")
	}
}
