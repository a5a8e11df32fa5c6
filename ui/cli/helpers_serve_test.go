package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"leaselab/ui/serve"
)

// A test server and real SSH clients (golang.org/x/crypto/ssh) that talk to it over TCP on
// 127.0.0.1, as an attendee's ssh does.

// testServer is a served lab on a free port, with its temporary folders under tmp.
type testServer struct {
	srv    *serve.Server
	addr   string
	hostPK gossh.PublicKey
	tmp    string // TMPDIR of the sessions' databases
	served chan error
	log    *syncBuf
}

// startServer starts a lab server with options o (listen and host key are the test's own).
func startServer(t testing.TB, o serveOptions) *testServer {
	t.Helper()
	return startServerWith(t, o, nil)
}

// startServerWith is startServer with the server's configuration changed by edit (when not nil)
// before the server is made.
func startServerWith(t testing.TB, o serveOptions, edit func(*serve.Config)) *testServer {
	t.Helper()
	ts := &testServer{tmp: t.TempDir(), served: make(chan error, 1), log: &syncBuf{}}
	t.Setenv("TMPDIR", ts.tmp)
	key, _, err := serve.HostKey(filepath.Join(t.TempDir(), "host_key"))
	if err != nil {
		t.Fatal(err)
	}
	ts.hostPK = key.PublicKey()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	if o.maxSessions == 0 {
		o.maxSessions = 40
	}
	cfg := labServerConfig(backends(), key, o, connectLine(ln.Addr()), ts.log)
	if edit != nil {
		edit(&cfg)
	}
	if ts.srv, err = serve.New(cfg); err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ts.serve(t, ln)
	return ts
}

// servedAt is a testServer for the leaselab serve at addr, a process or a Main of the test's,
// whose host key is at keyPath and whose sessions' TMPDIR is tmp: for connect, not for the
// server's own methods.
func servedAt(t testing.TB, addr, keyPath, tmp string) *testServer {
	t.Helper()
	k, _, err := serve.HostKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{addr: addr, hostPK: k.PublicKey(), tmp: tmp}
}

// serve runs ts.srv on ln and registers a cleanup that shuts it down (within 20 s) and waits for
// Serve to return, so that no lab outlives the test. Call it after every t.TempDir the server
// uses is made: cleanups run last registered first, so this one runs before their removal.
// Serve's error still goes to ts.served for a test that reads it.
func (ts *testServer) serve(t testing.TB, ln net.Listener) {
	t.Helper()
	stopped := make(chan struct{})
	go func() {
		ts.served <- ts.srv.Serve(ln)
		close(stopped)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := ts.srv.Shutdown(ctx); err != nil {
			t.Errorf("the test server's shutdown: %v", err)
		}
		ln.Close() // Serve returns even if Shutdown came before it tracked ln
		select {
		case <-stopped:
		case <-ctx.Done():
			t.Errorf("the test server's Serve did not return within 20s")
		}
	})
}

// syncBuf is a bytes.Buffer safe for one writer and many readers. With limit set it keeps the
// last limit bytes only (a benchmark's screens run for minutes).
type syncBuf struct {
	mu    sync.Mutex
	b     bytes.Buffer
	base  int // bytes dropped from the front
	limit int
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if s.limit > 0 && s.b.Len() > 2*s.limit {
		drop := s.b.Len() - s.limit
		s.b.Next(drop)
		s.base += drop
	}
	return n, err
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Len is how many bytes were ever written.
func (s *syncBuf) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base + s.b.Len()
}

// From returns what was written from offset off on (what is still kept of it).
func (s *syncBuf) From(off int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b.Bytes()[max(0, off-s.base):])
}

// attendee is one SSH connection with a session.
type attendee struct {
	t      testing.TB
	client *gossh.Client
	sess   *gossh.Session
	stdin  io.WriteCloser
	out    *syncBuf
	ended  chan error    // the session's exit
	read   chan struct{} // closed when the output has been read to its end
	drawn  chan struct{} // signalled after each read of output (the benchmark's clock)
	silent bool          // never answers a terminal query
}

// dialOpts say how an attendee connects.
type dialOpts struct {
	user    string
	env     map[string]string
	noPty   bool
	w, h    int
	command string       // "" for a shell request
	key     gossh.Signer // a key to authenticate with (nil: keyboard-interactive, no question)
	silent  bool         // a terminal that never answers the server's queries
	// retry: dial again for this long while the server refuses the connection (it is full of
	// waiting connections it has not yet seen close)
	retry time.Duration
}

// connect opens a connection and a session; it answers the terminal queries a real terminal
// answers (the renderer asks for the background colour and the device attributes).
func (ts *testServer) connect(t testing.TB, o dialOpts) *attendee {
	t.Helper()
	if o.user == "" {
		o.user = "attendee"
	}
	if o.w == 0 {
		o.w, o.h = 120, 40
	}
	auth := []gossh.AuthMethod{gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) { return nil, nil })}
	if o.key != nil {
		auth = []gossh.AuthMethod{gossh.PublicKeys(o.key)}
	}
	cfg := &gossh.ClientConfig{User: o.user, Auth: auth, HostKeyCallback: gossh.FixedHostKey(ts.hostPK), Timeout: 5 * time.Second}
	client, err := gossh.Dial("tcp", ts.addr, cfg)
	for deadline := time.Now().Add(o.retry); err != nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		client, err = gossh.Dial("tcp", ts.addr, cfg)
	}
	if err != nil {
		t.Fatalf("dial %s: %v", ts.addr, err)
	}
	t.Cleanup(func() { client.Close() })
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	a := &attendee{t: t, client: client, sess: sess, out: &syncBuf{}, ended: make(chan error, 1), read: make(chan struct{}), drawn: make(chan struct{}, 1), silent: o.silent}
	for k, v := range o.env {
		if err := sess.Setenv(k, v); err != nil {
			t.Fatalf("setenv %s: %v", k, err)
		}
	}
	if !o.noPty {
		if err := sess.RequestPty("xterm-256color", o.h, o.w, gossh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
	}
	if a.stdin, err = sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sess.Stderr = a.out
	if o.command == "" {
		err = sess.Shell()
	} else {
		err = sess.Start(o.command)
	}
	if err != nil {
		t.Fatal(err)
	}
	go a.readAll(stdout)
	go func() { a.ended <- sess.Wait() }()
	return a
}

// read keeps what the server draws, and answers a device-attributes query as xterm does.
func (a *attendee) readAll(r io.Reader) {
	defer close(a.read)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			a.out.Write(buf[:n])
			select {
			case a.drawn <- struct{}{}:
			default:
			}
			if !a.silent && bytes.Contains(buf[:n], []byte("\x1b[c")) {
				io.WriteString(a.stdin, "\x1b[?62;22c")
			}
		}
		if err != nil {
			return
		}
	}
}

// waitFor waits up to 15 s for the screen to show want.
func (a *attendee) waitFor(want string) {
	a.t.Helper()
	// Styles split words ("offer: \x1b[1mafter"): look in the text without its escapes too.
	if !poll(15*time.Second, 20*time.Millisecond, func() bool {
		return strings.Contains(a.out.String(), want) || strings.Contains(ansi.Strip(a.out.String()), want)
	}) {
		a.t.Fatalf("no %q after 15s; the screen's last output:\n%q", want, tail(a.out.String(), 3000))
	}
}

// press types keys, one write each, waiting for the screen to settle a little between them.
func (a *attendee) press(keys ...string) {
	a.t.Helper()
	for _, k := range keys {
		if _, err := io.WriteString(a.stdin, k); err != nil {
			a.t.Fatalf("key %q: %v", k, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exit waits for the session to end and returns its exit status (-1: no status).
func (a *attendee) exit() int {
	a.t.Helper()
	select {
	case err := <-a.ended:
		select {
		case <-a.read: // every byte the server sent before its exit status is in a.out
		case <-time.After(5 * time.Second):
		}
		if err == nil {
			return 0
		}
		if ee, ok := err.(*gossh.ExitError); ok {
			return ee.ExitStatus()
		}
		return -1
	case <-time.After(15 * time.Second):
		a.t.Fatal("the session did not end within 15s")
		return -1
	}
}

// hangUp drops the connection, as closing the laptop does.
func (a *attendee) hangUp() { a.client.Close() }

// waitSessions waits up to 10 s for the server to hold n labs.
func (ts *testServer) waitSessions(t testing.TB, n int) []serve.Info {
	t.Helper()
	var s []serve.Info
	if !poll(10*time.Second, 20*time.Millisecond, func() bool { s = ts.srv.Sessions(); return len(s) == n }) {
		t.Fatalf("%d labs open, want %d", len(s), n)
	}
	return s
}

// countLines is how many lines of the log hold s.
func countLines(log, s string) int {
	n := 0
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// waitLog waits up to 10 s for n lines of the server's log to hold s.
func (ts *testServer) waitLog(t *testing.T, s string, n int) {
	t.Helper()
	if !poll(10*time.Second, 10*time.Millisecond, func() bool { return countLines(ts.log.String(), s) >= n }) {
		t.Fatalf("%d lines with %q in the log, want %d:\n%s", countLines(ts.log.String(), s), s, n, ts.log.String())
	}
}

// newSigner is a new ed25519 key, as a client's.
func newSigner(t testing.TB) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// teacherKeys writes text to a file of the test's, and returns the keys --teacher-key reads from
// it (readAuthorizedKeys).
func teacherKeys(t *testing.T, text []byte) []gossh.PublicKey {
	t.Helper()
	file := filepath.Join(t.TempDir(), "teacher.pub")
	if err := os.WriteFile(file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	keys, err := readAuthorizedKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
