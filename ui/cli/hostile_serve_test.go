package cli

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"leaselab/ui/serve"
)

// TestHostileServe: serve's bad flags and environments fail before it listens, with one line.
func TestHostileServe(t *testing.T) {
	key := func(t *testing.T, dir string) string { return filepath.Join(dir, "key") }
	runHostile(t, "serve", []hostileCase{
		{name: "--max-sessions 0", setup: inDir("serve", "--max-sessions", "0", "--host-key", "DIR/key"),
			code: exitUsage, msg: "--max-sessions 0: want at least 1"},
		{name: "--idle -1s", setup: inDir("serve", "--idle", "-1s", "--host-key", "DIR/key"),
			code: exitUsage, msg: "--idle -1s: want a positive duration"},
		{name: "--listen without a port", setup: inDir("serve", "--listen", "localhost", "--host-key", "DIR/key"),
			code: exitUsage, msg: `--listen "localhost": want HOST:PORT`},
		{name: "an argument", setup: args("serve", "after"), code: exitUsage, msg: `serve takes no arguments, got "after"`},
		{name: "--listen on a port in use", setup: func(t *testing.T, dir string) ([]string, string) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			return []string{"serve", "--listen", ln.Addr().String(), "--host-key", key(t, dir)}, ""
		}, code: exitEnvError, msg: "address already in use"},
		{name: "a host key others can read", setup: func(t *testing.T, dir string) ([]string, string) {
			p := key(t, dir)
			if _, _, err := serve.HostKey(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"serve", "--host-key", p}, p
		}, code: exitEnvError, msg: "lets others read it; chmod 600", unchanged: true},
		{name: "a host key that is not a key", setup: func(t *testing.T, dir string) ([]string, string) {
			p := key(t, dir)
			if err := os.WriteFile(p, []byte("hello\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{"serve", "--host-key", p}, p
		}, code: exitEnvError, msg: "not a private key", unchanged: true},
		{name: "a host key that is a folder", setup: inDir("serve", "--host-key", "DIR"), code: exitEnvError, msg: "not a regular file"},
	})
}

// TestHostKeyReused: the key is made once, 0600, and the same key (and fingerprint) is read
// back the next time.
func TestHostKeyReused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "key")
	k1, created, err := serve.HostKey(p)
	if err != nil || !created {
		t.Fatalf("first: created %v, %v", created, err)
	}
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", info.Mode(), err)
	}
	dir, _ := os.Stat(filepath.Dir(p))
	if dir.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v", dir.Mode())
	}
	k2, created, err := serve.HostKey(p)
	if err != nil || created {
		t.Fatalf("second: created %v, %v", created, err)
	}
	f1, f2 := serve.Fingerprint(k1.PublicKey()), serve.Fingerprint(k2.PublicKey())
	if f1 != f2 || !strings.HasPrefix(f1, "SHA256:") {
		t.Fatalf("fingerprints %s, %s", f1, f2)
	}
}

// TestServeCommand runs "leaselab serve" as main does, with one lab open, and ends it as SIGTERM
// does (main's context): it prints the fingerprint and the line for the slide, tells the
// attendee, removes the database, and exits 0.
func TestServeCommand(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	keyPath := filepath.Join(t.TempDir(), "key")
	ctx, cancelCause := context.WithCancelCause(context.Background())
	cancel := func() { cancelCause(interrupted{syscall.SIGTERM}) } // as RunWithSignals does
	outR, outW := io.Pipe()
	var errb syncBuf
	code := make(chan int, 1)
	ran := make(chan struct{}) // closed when run has returned
	go func() {
		defer close(ran)
		code <- Main(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--host-key", keyPath}, Stdio{In: strings.NewReader(""), Out: outW, Err: &errb}, backends())
		outW.Close()
	}()
	// Whatever ends the test, the server stops before the folders go: cancel, close the pipe's
	// reader (a write serve is blocked in fails, so its shutdown cannot hang on it), then wait.
	t.Cleanup(func() {
		cancel()
		outR.Close()
		select {
		case <-ran:
		case <-time.After(20 * time.Second):
			t.Errorf("serve did not return within 20s of the test's end")
		}
	})
	lines := bufio.NewScanner(outR)
	var head []string
	for len(head) < 3 && lines.Scan() {
		head = append(head, lines.Text())
	}
	rest := make(chan string, 1)
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		rest <- b.String()
	}()
	text := strings.Join(head, "\n")
	addr := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`).FindStringSubmatch(text)
	if addr == nil || !regexp.MustCompile(`host key .*: SHA256:\S+ \(made now\)`).MatchString(text) ||
		!strings.Contains(text, "attendees type:  ssh -t -p ") {
		t.Fatalf("start-up lines:\n%s\nstderr: %s", text, errb.String())
	}
	ts := servedAt(t, addr[1], keyPath, tmp)
	if !strings.Contains(text, serve.Fingerprint(ts.hostPK)) {
		t.Errorf("the printed fingerprint is not the key's: %s", text)
	}
	a := ts.connect(t, dialOpts{})
	a.waitFor("PAY-006")
	cancel() // SIGTERM
	select {
	case c := <-code:
		if c != exitOK {
			t.Fatalf("exit %d, stderr %s", c, errb.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop within 15s")
	}
	if out := <-rest; !strings.Contains(out, "1 labs closed") {
		t.Errorf("closing lines: %q", out)
	}
	a.exit()
	if !strings.Contains(a.out.String(), "the server is shutting down") {
		t.Errorf("the attendee was not told")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	recordReliability(t, "serve", "SIGTERM with a lab open", exitOK, "leaselab serve: stopped; 1 labs closed, their workers stopped and databases removed", "—")
}
