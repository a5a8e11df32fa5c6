package cli

// The tests' helpers: leaselab in the test's process (cli) and as a child process (start,
// startWithTmp, startPiped: this test binary acting as leaselab, see TestMain), waiting for what
// they print or do, the checks several tests make of it, and its databases seeded. The
// databases' own helpers are in helpers_db_test.go, the SSH server's and its clients' in
// helpers_serve_test.go.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"leaselab/store"
	"leaselab/store/postgres"
)

// backends are the real databases the tests run on, as main wires them.
func backends() Backends {
	return Backends{File: store.Files{}, Servers: map[string]Servers{"postgres": postgres.Servers{}, "postgresql": postgres.Servers{}}}
}

// cli runs leaselab with args and returns its exit code, stdout and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, backends())
	return code, out.String(), errb.String()
}

// TestMain lets the test binary act as leaselab itself, so that tests can start real worker
// processes without building anything.
func TestMain(m *testing.M) {
	if os.Getenv("LEASELAB_TEST_CHILD") == "1" {
		code := RunWithSignals(os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, backends())
		if f := os.Getenv("LEASELAB_TEST_STATUS"); f != "" {
			// The exit code, for a parent that cannot wait for this process (tmux's pane, which
			// may take seconds to notice its process has ended).
			_ = os.WriteFile(f, []byte(fmt.Sprint(code)), 0o600)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// childEnv is the environment of a leaselab child process: the test's, with the variable that
// makes this test binary act as leaselab (TestMain), and extra ("NAME=value").
func childEnv(extra ...string) []string {
	return append(append(os.Environ(), "LEASELAB_TEST_CHILD=1"), extra...)
}

// leaselab is the command line that runs this test binary as leaselab with args.
func leaselab(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = childEnv()
	return cmd
}

// testTmux skips the test under -short (what says what it starts in tmux) or without tmux, and
// returns a function that runs tmux (10 s at most; its output trimmed) on a server of the
// test's own. The server's socket is in a folder of the test's own: tmux kill-server leaves the
// socket file behind, and the folder's removal takes it.
func testTmux(t *testing.T, what string) func(args ...string) (string, error) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts " + what + " in tmux")
	}
	tmuxPath, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("no tmux")
	}
	sock := filepath.Join(t.TempDir(), "tmux")
	return func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, tmuxPath, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
}

// paneCommand is the shell command of a tmux pane that runs this test binary as leaselab with
// args, its temporary folders in tmp, writing its exit code into status as it exits (TestMain).
func paneCommand(status, tmp, args string) string {
	return fmt.Sprintf("exec env TERM=xterm-256color LEASELAB_TEST_CHILD=1 LEASELAB_TEST_STATUS=%s TMPDIR=%s %s %s", status, tmp, os.Args[0], args)
}

// killAtCleanup kills cmd when the test ends and waits up to 10 s for gone (closed once it has
// been waited for), before the test's folders are removed. Call it after every t.TempDir the
// process uses is made: cleanups run last registered first.
func killAtCleanup(t testing.TB, cmd *exec.Cmd, gone <-chan struct{}) {
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-gone:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: not gone 10s after SIGKILL", cmd)
		}
	})
}

// child is a leaselab process started by a test, with its output collected line by line.
type child struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	seen  chan string   // every line, for waiting on one
	done  chan error    // cmd.Wait's error, once
	gone  chan struct{} // closed when the process has been waited for
}

// start starts leaselab with args as a child process.
func start(t *testing.T, args ...string) *child {
	t.Helper()
	return startCmd(t, leaselab(args...))
}

// startCmd starts cmd, a command line that runs this test binary as leaselab (directly, or
// through a wrapper such as "ip netns exec", which execs it), and collects its output.
func startCmd(t *testing.T, cmd *exec.Cmd) *child {
	t.Helper()
	cmd.Env = childEnv()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	c := &child{cmd: cmd, seen: make(chan string, 10000), done: make(chan error, 1), gone: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.gone)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			c.lines = append(c.lines, sc.Text())
			c.mu.Unlock()
			select {
			case c.seen <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, out) // a line too long stops the scanner: the child must not block on a full pipe
		c.done <- cmd.Wait()
	}()
	// The process is killed and waited for before the test's folders are removed.
	killAtCleanup(t, cmd, c.gone)
	return c
}

// output is every line c has printed so far.
func (c *child) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}

// waitMatch waits up to within for a line of c that re matches, and returns the match and its
// groups. It fails when c exits first, or when no line matches in time.
func (c *child) waitMatch(t testing.TB, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case line := <-c.seen:
			if m := re.FindStringSubmatch(line); m != nil {
				return m
			}
		case err := <-c.done:
			t.Fatalf("the process exited before a line matching %q: %v\n%s", re, err, c.output())
		case <-timeout:
			t.Fatalf("no line matching %q within %s:\n%s", re, within, c.output())
		}
	}
}

// waitLine is waitMatch for a line that holds sub.
func (c *child) waitLine(t testing.TB, sub string, within time.Duration) {
	t.Helper()
	c.waitMatch(t, regexp.MustCompile(regexp.QuoteMeta(sub)), within)
}

// finish waits up to within for c to exit, and fails unless it exited 0.
func (c *child) finish(t testing.TB, within time.Duration) {
	t.Helper()
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("worker: %v\n%s", err, c.output())
		}
	case <-time.After(within):
		t.Fatalf("worker did not finish:\n%s", c.output())
	}
}

// exitCode waits up to within for c to exit, and returns its exit code (-1: ended by a signal).
func (c *child) exitCode(t testing.TB, within time.Duration) int {
	t.Helper()
	select {
	case err := <-c.done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return 0
	case <-time.After(within):
		t.Fatalf("%s still runs %s on:\n%s", c.cmd, within, c.output())
	}
	return -1
}

// kill sends c SIGKILL and waits up to 10 s for it to exit.
func (c *child) kill(t testing.TB) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("a process did not exit within 10s of SIGKILL")
	}
}

// signalled is a leaselab process started with its own TMPDIR, so that the test can see the
// temporary folders it makes and check that it removes them.
type signalled struct {
	cmd         *exec.Cmd
	tmp         string
	stdout, err bytes.Buffer  // read only after done
	done        chan struct{} // closed when the process has been waited for
	waitErr     error         // cmd.Wait's error, read only after done
}

// startWithTmp starts leaselab with args and a TMPDIR of its own; the process is killed and
// waited for (10 s) before that folder is removed.
func startWithTmp(t *testing.T, args ...string) *signalled {
	t.Helper()
	p := &signalled{tmp: t.TempDir(), done: make(chan struct{})}
	p.cmd = leaselab(args...)
	p.cmd.Env = childEnv("TMPDIR=" + p.tmp)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	killAtCleanup(t, p.cmd, p.done)
	return p
}

// runFolders lists the leaselab-run-* folders in the process's TMPDIR.
func (p *signalled) runFolders() []string {
	m, _ := filepath.Glob(filepath.Join(p.tmp, "leaselab-run-*"))
	return m
}

// madeItsDatabase reports whether the process has one run folder, with its database in it.
func (p *signalled) madeItsDatabase() bool {
	f := p.runFolders()
	return len(f) == 1 && fileExists(filepath.Join(f[0], "leaselab.db"))
}

// waitFor polls until cond holds or the process exits (then fails).
func (p *signalled) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		select {
		case <-p.done:
			t.Fatalf("exited (%v) before %s\nstdout: %s\nstderr: %s", p.waitErr, what, p.stdout.String(), p.err.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("never %s", what)
		}
	}
}

// exit waits for the process and returns its exit code. A process that does not exit is killed,
// and its stderr is read only once it has been waited for (its copy ends with Wait).
func (p *signalled) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.cmd.Process.Kill()
		select {
		case <-p.done:
			t.Fatalf("did not exit after the signal (killed)\nstderr: %s", p.err.String())
		case <-time.After(10 * time.Second):
			t.Fatal("did not exit after the signal, nor 10s after SIGKILL")
		}
	}
	return p.cmd.ProcessState.ExitCode()
}

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
	p.cmd = leaselab(args...)
	p.cmd.Env = childEnv("TMPDIR=" + tmp)
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

// poll calls cond every `every` until it holds, and reports whether it did within `within`.
func poll(within, every time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); !cond(); time.Sleep(every) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// containsAll fails t for each of wants that text, what the test names what, does not hold.
func containsAll(t testing.TB, what, text string, wants ...string) {
	t.Helper()
	missing := false
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q", what, want)
			missing = true
		}
	}
	if missing {
		t.Logf("%s:\n%s", what, text)
	}
}

// finalizedOnce fails t unless the workers' logs show each of the messages PAY-001 … finalized
// exactly once, and no ownership violation.
func finalizedOnce(t testing.TB, logs string, messages int) {
	t.Helper()
	commits := map[string]int{}
	for _, m := range regexp.MustCompile(`finalized (PAY-\d+): payment`).FindAllStringSubmatch(logs, -1) {
		commits[m[1]]++
	}
	for i := 1; i <= messages; i++ {
		if k := fmt.Sprintf("PAY-%03d", i); commits[k] != 1 {
			t.Errorf("%s finalized %d times", k, commits[k])
		}
	}
	if strings.Contains(logs, "OWNERSHIP VIOLATION") {
		t.Errorf("ownership violation")
	}
}

// fileExists reports whether path names a file (or folder) that can be stat'ed.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// firstLine and lastLine are the first and last lines of s, its surrounding space trimmed.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// seedDB fills the database db (a file or a PostgreSQL URL) with n messages, with leaselab seed.
func seedDB(t *testing.T, db string, n int) {
	t.Helper()
	if code, _, stderr := cli(t, "seed", "--db", db, "--messages", fmt.Sprint(n)); code != exitOK {
		t.Fatalf("seed --db %s: exit %d: %s", db, code, stderr)
	}
}

// seeded makes a leaselab database of n messages at dir/name with leaselab seed.
func seeded(t *testing.T, dir, name string, n int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	seedDB(t, path, n)
	return path
}

// copyFile copies the file src to dst.
func copyFile(t *testing.T, dst, src string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, data, 0o666)
	}
	if err != nil {
		t.Fatal(err)
	}
}
