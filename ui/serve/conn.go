package serve

import (
	"net"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/ssh"
	"github.com/muesli/termenv"
)

// Connections before their lab: every TCP connection costs a file descriptor and a goroutine
// from its first byte, long before it is a lab that MaxSessions counts. A connection must open
// its lab (or the teacher's table) within Config.Handshake of connecting, or it is closed: a
// raw TCP connection that sends nothing, one that stops after the version line, one that
// authenticates and opens no session (ssh -N). At most Config.MaxPending wait at once; the next
// is closed at once. Each closed or refused one gets a log line.

// DefaultHandshake is Config.Handshake's default.
const DefaultHandshake = 20 * time.Second

// closeAfterLab is how long a connection stays open after its lab ended, for its last lines
// and exit status to reach the client.
const closeAfterLab = time.Second

// pendingConn is a connection the server tracks from its first byte to its close.
type pendingConn struct {
	net.Conn
	s *Server

	mu    sync.Mutex
	timer *time.Timer // the handshake deadline

	once    sync.Once // settles the count of pending connections once
	closing sync.Once
}

type pendingKey struct{}

// track is the server's ConnCallback: it refuses a connection past MaxPending, and closes one
// that has not opened a lab within Handshake.
func (s *Server) track(ctx ssh.Context, c net.Conn) net.Conn {
	addr := c.RemoteAddr().String()
	s.mu.Lock()
	if s.pending >= s.cfg.MaxPending {
		n := s.pending
		s.mu.Unlock()
		s.log.Printf("%s refused: %d connections are already waiting to open a lab, the most this server lets wait", addr, n)
		return nil // closed by the ssh server
	}
	s.pending++
	s.mu.Unlock()
	p := &pendingConn{Conn: c, s: s}
	p.mu.Lock()
	p.timer = time.AfterFunc(s.cfg.Handshake, func() {
		if p.settle() {
			s.log.Printf("%s: no lab opened within %s of connecting, closed", addr, s.cfg.Handshake)
			p.Close()
		}
	})
	p.mu.Unlock()
	ctx.SetValue(pendingKey{}, p)
	return p
}

// settle takes the connection out of the pending count; it reports whether this call did.
func (p *pendingConn) settle() bool {
	did := false
	p.once.Do(func() {
		did = true
		p.mu.Lock()
		p.timer.Stop()
		p.mu.Unlock()
		p.s.mu.Lock()
		p.s.pending--
		p.s.mu.Unlock()
	})
	return did
}

// Close closes the connection, and settles it if it was still pending.
func (p *pendingConn) Close() error {
	p.settle()
	var err error
	p.closing.Do(func() { err = p.Conn.Close() })
	return err
}

// opened marks the session's connection as having reached its lab: it is no longer pending.
func opened(sess ssh.Session) {
	if p, ok := sess.Context().Value(pendingKey{}).(*pendingConn); ok {
		p.settle()
	}
}

// closeConnSoon closes the session's connection shortly after its lab ended: a connection is
// one lab, and a client that keeps it open after holds a descriptor for nothing.
func closeConnSoon(sess ssh.Session) {
	if p, ok := sess.Context().Value(pendingKey{}).(*pendingConn); ok {
		time.AfterFunc(closeAfterLab, func() { p.Close() })
	}
}

// hangUpFunc closes the session's connection (nil when the server does not track it).
func hangUpFunc(sess ssh.Session) func() {
	if p, ok := sess.Context().Value(pendingKey{}).(*pendingConn); ok {
		return func() { p.Close() }
	}
	return nil
}

// sessionRenderer is the session's own renderer, with the colour profile its TERM and
// NO_COLOR ask for, built without asking the client's terminal anything. wish's MakeRenderer
// asks for the background colour and the device attributes and waits for the answer, for ever
// when the terminal never gives one (its timeout cannot interrupt a read of an SSH channel):
// two such clients held two slots. The background is set, not asked: dark, lipgloss's default.
func sessionRenderer(sess ssh.Session) *lipgloss.Renderer {
	pty, _, ok := sess.Pty()
	if !ok || pty.Term == "" || pty.Term == "dumb" {
		r := lipgloss.NewRenderer(sess, termenv.WithProfile(termenv.Ascii))
		r.SetHasDarkBackground(true)
		return r
	}
	env := environ(append(sess.Environ(), "TERM="+pty.Term))
	r := lipgloss.NewRenderer(sess, termenv.WithEnvironment(env), termenv.WithUnsafe(), termenv.WithColorCache(true))
	r.SetHasDarkBackground(true)
	return r
}

// environ is a session's environment as termenv reads it.
type environ []string

// Environ implements termenv.Environ.
func (e environ) Environ() []string { return e }

// Getenv implements termenv.Environ: the last value wins, as TERM is appended last.
func (e environ) Getenv(k string) string {
	v := ""
	for _, kv := range e {
		if rest, ok := strings.CutPrefix(kv, k+"="); ok {
			v = rest
		}
	}
	return v
}
