package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"leaselab/assets"
	"leaselab/ui/serve"
)

const serveUsage = `Usage: leaselab serve [--listen 127.0.0.1:2222] [--host-key PATH] [--max-sessions 40] [--idle 30m]
                      [--teacher-key FILE] [--handshake 20s] [--theme projector]
       leaselab serve --shared SCENARIO --teacher-key FILE [--messages N] [--db FILE|postgres://…]
                      [--idle-crash 0] [--handouts DIR] [flags above]

Serves the lab over SSH for a room: every connection gets its own lab on its own temporary
database, removed when it disconnects. Attendees need only an SSH client:

  ssh -t -p 2222 HOST            the lab on the playground
  ssh -t -p 2222 HOST after      the lab on a given scenario (leaselab list names them)

No shell, no command, no forwarding and no SFTP: the command line is a scenario name. The host
key is made once and reused; its fingerprint is printed at start, for the slide. A connection
with a key of --teacher-key gets the teacher's table instead: every lab, and a scenario to
offer them all. A connection that has not opened its lab 20 s (--handshake) after connecting is
closed, and at most --max-sessions + 16 may wait at once. --theme projector draws every
served screen (the teacher's, which the projector shows, and the labs) in high contrast. SIGINT, SIGTERM or SIGHUP closes every lab, stops its workers and removes its
database.

With --shared SCENARIO the room plays the workers: one outbox on one database (a SQLite file of
the server's, or --db), and every attendee a worker of it named from their SSH user, at most
--max-sessions (--max-labs) of them. The teacher's connection holds the room: the toggles, the
clock, a pause, crashes, a reset, questions, and the transcript (w, into --handouts DIR or the
working folder).
`

// Per-session limits of a served lab.
const (
	serveMaxMessages = 1000
	serveMaxWorkers  = 16
	serveMinPace     = 100 * time.Millisecond // the default pace: faster is not offered to a room
	serveStopWithin  = 15 * time.Second       // how long a shutdown waits for the labs to close
)

// serveOptions are serve's flags, checked.
type serveOptions struct {
	listen, hostKey string
	teacherKey      string            // --teacher-key: an authorized_keys file
	theme           string            // --theme: every screen's styles, the teacher's and the attendees'
	teachers        []gossh.PublicKey // its keys
	maxSessions     int
	idle            time.Duration
	roomBudget      int    // --room-budget: worker actions a second all free runs share
	handouts        string // --handouts: the folder served labs' w writes into ("" none)
	handoutsPerLab  int
	handshake       time.Duration // --handshake: a connection's time to open its lab
	maxPending      int           // connections that may wait for their lab at once (0: serve's default); tests set it
	shared          sharedOptions // --shared and its flags (cmd_serve_shared.go)
}

func parseServe(args []string, stderr io.Writer) (serveOptions, error) {
	fs := newFlagSet("serve", serveUsage, stderr)
	var o serveOptions
	fs.StringVar(&o.listen, "listen", "127.0.0.1:2222", "address to listen on (0.0.0.0:2222 for the whole room)")
	fs.StringVar(&o.hostKey, "host-key", defaultHostKey(), "the server's ed25519 host key; made (mode 0600) if missing")
	fs.IntVar(&o.maxSessions, "max-sessions", 40, "labs open at once; the next connection is told the room is full")
	fs.StringVar(&o.teacherKey, "teacher-key", "", "authorized_keys file: a connection with one of its keys gets the teacher's table")
	fs.DurationVar(&o.idle, "idle", 30*time.Minute, "close a lab after this long without a key press (0: never)")
	fs.StringVar(&o.handouts, "handouts", "", "folder where each lab's w may write a handout (default: none; a lab writes nothing on the server)")
	fs.IntVar(&o.handoutsPerLab, "handouts-per-lab", 3, "handouts one lab may write into --handouts")
	fs.IntVar(&o.roomBudget, "room-budget", serve.DefaultFreeBudget, "worker actions a second that the free runs of all labs share at most; a key press in any lab goes first")
	fs.DurationVar(&o.handshake, "handshake", serve.DefaultHandshake, "close a connection that has not opened its lab this long after connecting")
	o.shared.register(fs, &o.maxSessions)
	registerTheme(fs, &o.theme)
	if err := parseNoArgs(fs, args); err != nil {
		return o, err
	}
	if err := checkTheme(o.theme); err != nil {
		return o, usageError{err}
	}
	if err := o.shared.check(fs, o.teacherKey); err != nil {
		return o, err
	}
	switch {
	case o.maxSessions < 1:
		return o, usageError{fmt.Errorf("--max-sessions %d: want at least 1", o.maxSessions)}
	case o.handoutsPerLab < 1 || o.handoutsPerLab > 100:
		return o, usageError{fmt.Errorf("--handouts-per-lab %d: want 1 to 100", o.handoutsPerLab)}
	case o.roomBudget < 10:
		return o, usageError{fmt.Errorf("--room-budget %d: want at least 10 actions a second", o.roomBudget)}
	case o.idle < 0:
		return o, usageError{fmt.Errorf("--idle %s: want a positive duration, or 0 for never", o.idle)}
	case o.handshake <= 0:
		return o, usageError{fmt.Errorf("--handshake %s: want a positive duration, e.g. 20s", o.handshake)}
	case o.hostKey == "":
		return o, usageError{errors.New("--host-key: want a file path")}
	}
	if o.handouts != "" {
		if info, err := os.Stat(o.handouts); err != nil || !info.IsDir() {
			return o, usageError{fmt.Errorf("--handouts %s: want an existing folder", o.handouts)}
		}
	}
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		return o, usageError{fmt.Errorf("--listen %q: want HOST:PORT, e.g. 127.0.0.1:2222 (%v)", o.listen, err)}
	}
	return o, nil
}

// defaultHostKey is where the host key lives unless --host-key says otherwise.
func defaultHostKey() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "leaselab_host_ed25519_key"
	}
	return filepath.Join(dir, "leaselab", "ssh_host_ed25519_key")
}

func cmdServe(ctx context.Context, b Backends, args []string, stdout, stderr io.Writer) error {
	o, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	if o.teacherKey != "" {
		if o.teachers, err = readAuthorizedKeys(o.teacherKey); err != nil {
			return err
		}
	}
	key, created, err := serve.HostKey(o.hostKey)
	if err != nil {
		return err
	}
	if o.shared.scenario != "" {
		return cmdServeShared(ctx, b, o, key, created, stdout, stderr)
	}
	srv, ln, err := listenServer(o, func(connect string) (*serve.Server, error) {
		return newLabServer(b, key, o, connect, stderr)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "leaselab serve: listening on %s (up to %d labs; %s)\n", ln.Addr(), o.maxSessions, idleWords(o.idle))
	fmt.Fprintln(stdout, hostKeyLine(o.hostKey, key, created))
	if len(o.teachers) > 0 {
		fmt.Fprintf(stdout, "the teacher's table:  %s  with a key of %s (%d keys)\n", connectLine(ln.Addr()), o.teacherKey, len(o.teachers))
	}
	fmt.Fprintf(stdout, "attendees type:  %s   or   %s after\n", connectLine(ln.Addr()), connectLine(ln.Addr()))
	n := 0
	if err := serveUntilStopped(ctx, srv, ln, func() {
		n = len(srv.Sessions())
		fmt.Fprintf(stdout, "leaselab serve: stopping; closing %d labs …\n", n)
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "leaselab serve: stopped; %d labs closed, their workers stopped and databases removed\n", n)
	return nil
}

// listenServer listens on --listen and builds the server for it with build, which is given the
// line attendees type; when build fails, the listener is closed.
func listenServer(o serveOptions, build func(connect string) (*serve.Server, error)) (*serve.Server, net.Listener, error) {
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return nil, nil, fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	srv, err := build(connectLine(ln.Addr()))
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	return srv, ln, nil
}

// hostKeyLine names the host key's file and its fingerprint, and says whether it was made now.
func hostKeyLine(path string, key gossh.Signer, created bool) string {
	how := "reused"
	if created {
		how = "made now"
	}
	return fmt.Sprintf("host key %s: %s (%s)", path, serve.Fingerprint(key.PublicKey()), how)
}

// serveUntilStopped serves srv on ln until ctx ends (SIGINT, SIGTERM, or SIGHUP: a closed
// terminal ends the server as the others do, since it owns folders), then calls stopping and
// shuts the server down, within serveStopWithin.
func serveUntilStopped(ctx context.Context, srv *serve.Server, ln net.Listener, stopping func()) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stopping()
	sctx, cancel := context.WithTimeout(context.Background(), serveStopWithin)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	<-served
	return nil
}

// newLabServer builds the server: each connection gets a root of its own that opens built-in
// scenarios only, within the per-session caps, on temporary databases.
func newLabServer(b Backends, key gossh.Signer, o serveOptions, connect string, log io.Writer) (*serve.Server, error) {
	return serve.New(labServerConfig(b, key, o, connect, log))
}

// labServerConfig is newLabServer's configuration.
func labServerConfig(b Backends, key gossh.Signer, o serveOptions, connect string, log io.Writer) serve.Config {
	return serve.Config{
		HostKey: key, Theme: o.theme, MaxSessions: o.maxSessions, Idle: o.idle, TeacherKeys: o.teachers, Handshake: o.handshake, MaxPending: o.maxPending,
		Start: assets.Default, Scenarios: lessonsFor(b, ""), MinPace: serveMinPace,
		Connect: connect, Log: log, FreeBudget: o.roomBudget, Handouts: o.handouts, HandoutsPerLab: o.handoutsPerLab,
		NewRoot: func() serve.Root {
			r := newLabRoot(b, nil, nil)
			r.builtinOnly = true
			r.caps = scenarioCaps{messages: serveMaxMessages, workers: serveMaxWorkers}
			return r
		},
	}
}

// connectLine is what attendees type to reach addr.
func connectLine(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "ssh -t HOST"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "HOST" // every interface: the teacher's machine name goes here
	}
	return fmt.Sprintf("ssh -t -p %s %s", port, host)
}

func idleWords(d time.Duration) string {
	if d == 0 {
		return "an idle lab stays open"
	}
	return "a lab idle for " + d.String() + " is closed"
}

// maxTeacherKeyFile bounds the --teacher-key file: it is read whole, before the server starts.
const maxTeacherKeyFile = 1 << 20

// readAuthorizedKeys reads the public keys of an authorized_keys file (comments and blank lines
// skipped); a line that is not a key is an error naming file:line.
func readAuthorizedKeys(path string) ([]gossh.PublicKey, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--teacher-key: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("--teacher-key %s: not a regular file", path)
	}
	if info.Size() > maxTeacherKeyFile {
		return nil, usageError{fmt.Errorf("--teacher-key %s: file too large: %d bytes (at most %d; an authorized_keys file of a few keys is a few KB)", path, info.Size(), maxTeacherKeyFile)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--teacher-key: %w", err)
	}
	defer f.Close()
	// The file may have grown since the Stat: read no more than the cap, and refuse it if more.
	data, err := io.ReadAll(io.LimitReader(f, maxTeacherKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("--teacher-key: %w", err)
	}
	if len(data) > maxTeacherKeyFile {
		return nil, usageError{fmt.Errorf("--teacher-key %s: file too large: more than %d bytes", path, maxTeacherKeyFile)}
	}
	var keys []gossh.PublicKey
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, _, _, _, err := gossh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return nil, usageError{fmt.Errorf("%s:%d: not a public key (want an authorized_keys line, e.g. the .pub file): %v", path, i+1, err)}
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, usageError{fmt.Errorf("--teacher-key %s: no public key in it", path)}
	}
	return keys, nil
}
