package cli

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// closedWithin reads c until the server closes it, and reports how long that took; it fails
// when c is still open after limit (a read that times out).
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	buf := make([]byte, 4096)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s: still open after %s", c.LocalAddr(), limit)
		}
		return time.Since(start)
	}
}

// serverBanner reads c until the server's version line ("SSH-2.0-…") and reports whether it
// came: the server sends it only to a connection it counts as waiting for a lab, and closes a
// refused one without a byte. A connection that has its banner is counted, whatever the
// machine's load; no timing decides it.
func serverBanner(t *testing.T, c net.Conn) bool {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	var got []byte
	buf := make([]byte, 256)
	for !strings.Contains(string(got), "\n") {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s: neither a version line nor a close from the server in 20 s (got %q)", c.LocalAddr(), got)
		}
		if err != nil {
			break
		}
	}
	return strings.HasPrefix(string(got), "SSH-2.0-")
}

// refusedAtOnce dials addr and reports whether the server closed the connection without its
// version line.
func refusedAtOnce(t *testing.T, addr string) bool {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return !serverBanner(t, c)
}

// Connections that never open a lab are closed after --handshake, each with a log line: raw
// TCP that sends nothing, one that stops after its version line, and an SSH client that
// authenticates and opens no session (ssh -N). Today all stay open for ever.
func TestServeClosesConnectionsWithoutALab(t *testing.T) {
	ts := startServer(t, serveOptions{handshake: time.Second})
	var raws []net.Conn
	for range 5 {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		raws = append(raws, c)
	}
	version, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { version.Close() })
	io.WriteString(version, "SSH-2.0-OpenSSH_9.6\r\n")
	cfg := &gossh.ClientConfig{User: "quiet", HostKeyCallback: gossh.FixedHostKey(ts.hostPK), Timeout: 5 * time.Second,
		Auth: []gossh.AuthMethod{gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) { return nil, nil })}}
	client, err := gossh.Dial("tcp", ts.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	ended := make(chan error, 1)
	go func() { ended <- client.Wait() }()

	var slowest time.Duration
	for _, c := range append(raws, version) {
		slowest = max(slowest, closedWithin(t, c, 5*time.Second))
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Error("an authenticated connection with no session is still open 5 s after connecting")
	}
	ts.waitLog(t, "no lab opened within 1s of connecting, closed", 7)
	if !t.Failed() {
		recordReliability(t, "serve", "5 raw TCP connections that send nothing, 1 that stops after its version line, 1 ssh -N (--handshake 1s)", exitOK,
			"each closed within "+slowest.Round(100*time.Millisecond).String()+"; log: ADDR: no lab opened within 1s of connecting, closed", "—")
	}
}

// At most MaxPending connections wait for their lab; the next is closed at once, with a log
// line, and a lab is open to all again once they are gone.
func TestServeLimitsWaitingConnections(t *testing.T) {
	ts := startServer(t, serveOptions{maxPending: 3, handshake: 30 * time.Second})
	var raws []net.Conn
	for i := range 3 {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		// The server takes connections in goroutines, in no fixed order: wait until it has
		// counted this one (its version line) before dialling the next, or the fourth could
		// be counted before the third and the third refused.
		if !serverBanner(t, c) {
			t.Fatalf("waiting connection %d of 3 was refused:\n%s", i+1, ts.log.String())
		}
		raws = append(raws, c)
	}
	if !refusedAtOnce(t, ts.addr) {
		t.Fatalf("a fourth waiting connection was not refused:\n%s", ts.log.String())
	}
	if !strings.Contains(ts.log.String(), "refused: 3 connections are already waiting to open a lab") {
		t.Errorf("no log line for the refused connection:\n%s", ts.log.String())
	}
	for _, c := range raws {
		c.Close()
	}
	// The three closed ones leave the count as the server notices their close, as a probe of
	// refusedAtOnce would, and that is not at once: the lab's own connection is dialled again
	// until the server lets it in.
	a := ts.connect(t, dialOpts{user: "after", retry: 5 * time.Second})
	a.waitFor("PAY-006")
	if !t.Failed() {
		recordReliability(t, "serve", "a 4th connection waiting for its lab (3 may wait)", exitOK,
			"closed at once; log: ADDR refused: 3 connections are already waiting to open a lab, the most this server lets wait", "—")
	}
}

// Terminals that never answer the server's queries (background colour, device attributes) get
// their lab all the same, and --idle closes the labs and their connections, which frees their
// slots. Today the two wait for an answer for ever and fill --max-sessions 2.
func TestServeSilentTerminals(t *testing.T) {
	ts := startServer(t, serveOptions{maxSessions: 2, idle: time.Second})
	a := ts.connect(t, dialOpts{user: "mute1", silent: true})
	b := ts.connect(t, dialOpts{user: "mute2", silent: true})
	a.waitFor("PAY-006")
	b.waitFor("PAY-006")
	for _, c := range []*attendee{a, b} {
		select {
		case <-c.ended:
		case <-time.After(10 * time.Second):
			t.Fatal("a silent terminal's lab is still open 10 s after --idle 1s")
		}
		done := make(chan error, 1)
		go func() { done <- c.client.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the connection of a lab closed for idling is still open 5 s later")
		}
	}
	ts.waitLog(t, "idle for 1s, closing", 2)
	ts.waitSessions(t, 0)
	c := ts.connect(t, dialOpts{user: "next"})
	c.waitFor("PAY-006")
	if !t.Failed() {
		recordReliability(t, "serve", "2 terminals that never answer a query, --max-sessions 2 --idle 1s", exitOK,
			"both drawn, both closed after 1s idle (lab and connection); a third attendee then gets a lab", "—")
	}
}

// --handshake must be a positive duration.
func TestHostileServeHandshake(t *testing.T) {
	runHostile(t, "serve", []hostileCase{
		{name: "--handshake 0", setup: inDir("serve", "--handshake", "0", "--host-key", "DIR/key"), code: exitUsage, msg: "--handshake 0s: want a positive duration"},
	})
}

// An SSH user name is the client's to choose: a bidi override (U+202E) or a line feed in it
// must reach neither the teacher's table nor the log raw, where the one reorders what the
// teacher reads and the other splits a log line and forges the next. Today both pass through.
func TestNetworkNamesAreEscaped(t *testing.T) {
	teacher := newSigner(t)
	ts := startServer(t, serveOptions{maxSessions: 4, teachers: teacherKeys(t, gossh.MarshalAuthorizedKey(teacher.PublicKey()))})
	const name = "mal\u202eexe.txt\n2026/12/01 09:00:00 forged: teacher logged in"
	a := ts.connect(t, dialOpts{user: name})
	a.waitFor("PAY-006")
	tt := ts.connect(t, dialOpts{user: "teacher", key: teacher})
	tt.waitFor("the teacher's table: 1 of 4 labs open")
	tt.waitFor(`mal\u202eexe`)
	if strings.Contains(tt.out.String(), "\u202e") {
		t.Errorf("the teacher's table shows a raw U+202E")
	}
	a.hangUp()
	ts.waitLog(t, "closed, database removed", 1)
	log := ts.log.String()
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, "2026/12/01 09:00:00 forged") {
			t.Errorf("a forged log line: %q", l)
		}
	}
	if strings.Contains(log, "\u202e") || !strings.Contains(log, `mal\u202eexe.txt\x0a2026/12/01 09:00:00 forged`) {
		t.Errorf("the log shows the name raw, or not as words.Escape writes it:\n%s", log)
	}
	if !t.Failed() {
		recordReliability(t, "serve", "an SSH user name with U+202E and a line feed (forged log line)", exitOK,
			`mal\u202eexe.txt\x0a2026/12/01 09:00:00 forged: … (one log line; the same in the teacher's table)`, "—")
	}
}
