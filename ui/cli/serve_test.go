package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"
	"leaselab/ui/serve"
)

// processing counts the Processing rows of the database at path, read with a connection of the
// test's own.
func processing(t *testing.T, path string) int {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer db.Close()
	rows, err := db.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Status == engine.StatusProcessing {
			n++
		}
	}
	return n
}

// TestServeTwoLabsIndependent opens two labs at once: each steps its own workers on its own
// database, a crash in one is seen in neither the other's screen nor its database, and each
// draws with its own colour profile (NO_COLOR from the client's environment honoured).
func TestServeTwoLabsIndependent(t *testing.T) {
	ts := startServer(t, serveOptions{})
	a := ts.connect(t, dialOpts{user: "ana"})
	b := ts.connect(t, dialOpts{user: "ben", env: map[string]string{"NO_COLOR": "1"}})
	a.waitFor("PAY-006")
	b.waitFor("PAY-006")

	a.press(" ")
	a.waitFor("Worker-A claimed PAY-001")
	a.press(" ")
	a.waitFor("Worker-B claimed PAY-002")
	a.press("1", "x")
	a.waitFor("Worker-A CRASHED holding PAY-001")
	b.press(" ")
	b.waitFor("Worker-A claimed PAY-001")

	infos := ts.waitSessions(t, 2)
	paths := map[string]string{}
	for _, in := range infos {
		paths[in.User] = in.DBPath
	}
	if paths["ana"] == "" || paths["ana"] == paths["ben"] {
		t.Fatalf("databases: %v", paths)
	}
	if got := processing(t, paths["ana"]); got != 2 {
		t.Errorf("ana's database: %d rows Processing, want 2", got)
	}
	if got := processing(t, paths["ben"]); got != 1 {
		t.Errorf("ben's database: %d rows Processing, want 1 (ana's steps leaked into it?)", got)
	}
	if strings.Contains(b.out.String(), "CRASHED") || strings.Contains(b.out.String(), "PAY-002, lease") {
		t.Error("ben's screen shows ana's crash or steps")
	}
	if !strings.Contains(a.out.String(), "\x1b[38;5;") {
		t.Error("ana (xterm-256color) got no 256-colour styles")
	}
	if strings.Contains(b.out.String(), "\x1b[38;5;") {
		t.Error("ben (NO_COLOR=1) got colour")
	}
	a.press("q")
	if code := a.exit(); code != 0 {
		t.Errorf("q: exit status %d", code)
	}
	b.press("step") // s t e p: keys, not a command
	ts.waitSessions(t, 1)
}

// TestServeRefusals: no pty, an unknown scenario, too many words, and what the protocol must not
// offer (port forwarding both ways, SFTP) are refused; "list" answers without a pty.
func TestServeRefusals(t *testing.T) {
	ts := startServer(t, serveOptions{})
	for _, tc := range []struct {
		name string
		o    dialOpts
		want string
		code int
	}{
		{"no pty", dialOpts{noPty: true}, "leaselab needs a terminal: connect with  ssh -t -p ", 1},
		{"no pty, a scenario", dialOpts{noPty: true, command: "after"}, "leaselab needs a terminal", 1},
		{"unknown scenario", dialOpts{command: "/etc/passwd"}, `unknown scenario "/etc/passwd": choose one of playground, before`, 1},
		{"a command line", dialOpts{command: "after; sh"}, `unknown scenario "after; sh"`, 1},
		{"list", dialOpts{noPty: true, command: "list"}, "scenarios: playground, before, after", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := ts.connect(t, tc.o)
			if code := a.exit(); code != tc.code {
				t.Errorf("exit status %d, want %d", code, tc.code)
			}
			if !strings.Contains(a.out.String(), tc.want) {
				t.Errorf("printed %q, want %q", a.out.String(), tc.want)
			}
		})
	}
	a := ts.connect(t, dialOpts{})
	a.waitFor("PAY-006")
	if _, err := a.client.Dial("tcp", ts.addr); err == nil {
		t.Error("local port forwarding (direct-tcpip) was allowed")
	}
	if _, err := a.client.Listen("tcp", "127.0.0.1:0"); err == nil {
		t.Error("remote port forwarding (tcpip-forward) was allowed")
	}
	s2, err := a.client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.RequestSubsystem("sftp"); err == nil {
		t.Error("the sftp subsystem was offered")
	}
	ts.waitSessions(t, 1)
}

// TestServeSessionLimit: the connection past --max-sessions is told the room is full; once a
// lab closes, the next one gets in.
func TestServeSessionLimit(t *testing.T) {
	ts := startServer(t, serveOptions{maxSessions: 2})
	a := ts.connect(t, dialOpts{})
	b := ts.connect(t, dialOpts{})
	a.waitFor("PAY-006")
	b.waitFor("PAY-006")
	c := ts.connect(t, dialOpts{})
	if code := c.exit(); code != 1 || !strings.Contains(c.out.String(), "the room is full: 2 labs are open") {
		t.Fatalf("third connection: exit %d, printed %q", code, c.out.String())
	}
	a.hangUp()
	ts.waitSessions(t, 1)
	d := ts.connect(t, dialOpts{})
	d.waitFor("PAY-006")
	ts.waitSessions(t, 2)
}

// TestServeDisconnectRemovesDB drops a connection in the middle of a free run: the lab's
// workers stop and its database folder is removed.
func TestServeDisconnectRemovesDB(t *testing.T) {
	ts := startServer(t, serveOptions{})
	a := ts.connect(t, dialOpts{})
	a.waitFor("PAY-006")
	a.press("g")
	a.waitFor("FREE-RUNNING")
	path := ts.waitSessions(t, 1)[0].DBPath
	if _, err := os.Stat(path); err != nil || !strings.HasPrefix(path, ts.tmp) {
		t.Fatalf("database %s: %v (tmp %s)", path, err, ts.tmp)
	}
	a.hangUp()
	ts.waitSessions(t, 0)
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after the disconnect, %s: %v", filepath.Dir(path), err)
	}
	if left, _ := filepath.Glob(filepath.Join(ts.tmp, "*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// TestServeResizeAndIdle: the lab follows the pty's window changes, and closes after --idle
// without a key press, saying so.
func TestServeResizeAndIdle(t *testing.T) {
	ts := startServer(t, serveOptions{idle: 1500 * time.Millisecond})
	a := ts.connect(t, dialOpts{w: 100, h: 30})
	a.waitFor("PAY-006")
	if err := a.sess.WindowChange(20, 60); err != nil {
		t.Fatal(err)
	}
	a.waitFor("terminal too small (need 80×24, have 60×20)")
	a.press(" ") // a key press: the idle clock starts again
	a.waitFor("closed after 1.5s without a key press")
	if code := a.exit(); code != 0 {
		t.Errorf("idle: exit status %d", code)
	}
	ts.waitSessions(t, 0)
}

// TestServeShutdown closes the server with two labs open, one free-running: each attendee reads
// why, every database is removed, Serve returns, and no goroutine is left.
func TestServeShutdown(t *testing.T) {
	before := runtime.NumGoroutine()
	ts := startServer(t, serveOptions{})
	a := ts.connect(t, dialOpts{})
	b := ts.connect(t, dialOpts{command: "many-workers"})
	a.waitFor("PAY-006")
	b.waitFor("PAY-")
	b.press("g")
	b.waitFor("FREE-RUNNING")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ts.served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for _, x := range []*attendee{a, b} {
		x.exit()
		if !strings.Contains(x.out.String(), "the server is shutting down") {
			t.Errorf("an attendee was not told: %q", tail(x.out.String(), 300))
		}
		x.hangUp()
	}
	if left, _ := filepath.Glob(filepath.Join(ts.tmp, "*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	if !poll(10*time.Second, 50*time.Millisecond, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, %d before the server:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
}

// panicky is a root that panics when asked for one scenario, as a bug in a lab would.
type panicky struct {
	*labRoot
	on string
}

func (p panicky) Open(ctx context.Context, name string) (*engine.Session, error) {
	if name == p.on {
		panic("a bug in one lab")
	}
	return p.labRoot.Open(ctx, name)
}

// TestServePanicEndsOneLab: a panic in one attendee's lab ends that lab only: its database is
// removed, the server keeps serving, and the other attendee's lab steps on.
func TestServePanicEndsOneLab(t *testing.T) {
	ts := startServerWith(t, serveOptions{maxSessions: 4}, func(cfg *serve.Config) {
		real := cfg.NewRoot
		cfg.NewRoot = func() serve.Root { return panicky{real().(*labRoot), "before"} }
	})

	a := ts.connect(t, dialOpts{user: "ana"})
	b := ts.connect(t, dialOpts{user: "ben"})
	a.waitFor("PAY-006")
	b.waitFor("PAY-006")
	a.press(" ")
	a.waitFor("Worker-A claimed PAY-001")
	a.press("\t") // the next scenario is before: its Open panics
	a.exit()
	ts.waitSessions(t, 1)
	if left, _ := filepath.Glob(filepath.Join(ts.tmp, "*")); len(left) != 1 {
		t.Fatalf("after ana's panic, folders %v: want ben's only", left)
	}
	b.press(" ")
	b.waitFor("Worker-A claimed PAY-001")
	c := ts.connect(t, dialOpts{user: "cy"})
	c.waitFor("PAY-006")
	if !strings.Contains(ts.log.String(), "ana 127.0.0.1") || !strings.Contains(ts.log.String(), "ended on an error") {
		t.Errorf("the log does not say ana's lab ended on an error:\n%s", ts.log.String())
	}
	if !strings.Contains(a.out.String(), "this lab stopped on an internal error") {
		t.Errorf("ana was not told: %q", tail(a.out.String(), 300))
	}
}
