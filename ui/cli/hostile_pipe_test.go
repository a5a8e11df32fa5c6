package cli

import (
	"bufio"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"leaselab/ui/serve"
)

// piped is a leaselab child process whose stdout (and, with both, its stderr) is the write end
// of a real pipe, as in "leaselab … | head -n N": the test reads N lines, then closes the read
// end, as head does when it exits.
type piped struct {
	cmd    *exec.Cmd
	r      *os.File
	lines  *bufio.Scanner
	stderr syncBuf
	done   chan struct{}
}

func startPiped(t *testing.T, tmp string, both bool, args ...string) *piped {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &piped{r: r, lines: bufio.NewScanner(r), done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(os.Environ(), "LEASELAB_TEST_CHILD=1", "TMPDIR="+tmp)
	p.cmd.Stdout = w
	p.cmd.Stderr = &p.stderr
	if both {
		p.cmd.Stderr = w
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close() // the child holds the only write end
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done; r.Close() })
	return p
}

// head reads n lines, as head -n N does.
func (p *piped) head(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n && p.lines.Scan() {
		got = append(got, p.lines.Text())
	}
	if len(got) < n {
		t.Fatalf("the output ended after %d lines: %q\nstderr: %s", len(got), got, p.stderr.String())
	}
	return got
}

// exit waits up to 20 s for the child and returns how it ended: its exit code, or -1 when a
// signal killed it.
func (p *piped) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("still running 20 s after its output was closed\nstderr: %s", p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
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
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var processing, processed int
	if err := conn.QueryRow(`SELECT count(*) FILTER (WHERE Status = 'Processing'), count(*) FILTER (WHERE Status = 'Processed') FROM OutboxMessages`).Scan(&processing, &processed); err != nil {
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
	k, _, err := serve.HostKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{addr: addr[1], hostPK: k.PublicKey(), tmp: tmp}
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
	p.waitFor(t, "made its database", func() bool {
		f := p.runFolders()
		return len(f) == 1 && fileExists(filepath.Join(f[0], "leaselab.db"))
	})
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

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}
