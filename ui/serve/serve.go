// Package serve is the lab over SSH: one lab per connection, each on its own temporary
// database, with its own renderer and window, built on wish and its Bubble Tea middleware. The
// room is protected by limits: a session count, an idle timeout, a floor on the free-run pace,
// and a panic that ends one session only.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	"github.com/charmbracelet/wish/activeterm"
	bm "github.com/charmbracelet/wish/bubbletea"
	"github.com/charmbracelet/wish/logging"
	"github.com/charmbracelet/wish/recover"
	"github.com/muesli/termenv"
	gossh "golang.org/x/crypto/ssh"

	"leaselab/engine"
)

// Root opens one attendee's scenarios, each on a fresh database, and removes them at Close.
type Root interface {
	// Open closes the session opened before, if any, and opens name on a fresh database.
	Open(ctx context.Context, name string) (*engine.Session, error)
	// DBPath is the open session's database file ("" when none is open).
	DBPath() string
	// Close closes the open session and removes its database.
	Close() error
}

// Config is what the server needs.
type Config struct {
	HostKey gossh.Signer
	// Theme names the style set of every screen the server draws (common.Theme): the teacher's
	// views and the attendees' labs alike, since the projector shows whichever the teacher opens
	// ("" or "default", "projector").
	Theme string
	// MaxSessions is how many labs may be open at once (0: 40).
	MaxSessions int
	// Idle ends a lab that has had no key press for this long (0: never).
	Idle time.Duration
	// Start is the scenario a connection without a command opens; Scenarios are the names an
	// attendee may ask for (ssh -t HOST NAME), in the order tab cycles through them.
	Start     string
	Scenarios []string
	// TeacherKeys are the public keys whose connections get the teacher's table instead of a
	// lab (none: no teacher). With keys set, every other connection is let in as an attendee
	// whatever key or none it offers.
	TeacherKeys []gossh.PublicKey
	// NewRoot returns a fresh root for each connection.
	NewRoot func() Root
	// MinPace is the fastest free-run pace a lab offers.
	MinPace time.Duration
	// Connect is the command line attendees type, for the lines the server prints:
	// "ssh -t -p 2222 HOST".
	Connect string
	// Log receives one line per connection, disconnection, refusal and recovered panic
	// (nil: discarded).
	Log io.Writer
	// Now is the wall clock of the idle timeout and of the room's budget (nil: time.Now).
	Now func() time.Time
	// Handouts is a folder where each lab may write HandoutsPerLab handouts (w); "" (the
	// default): a served lab writes nothing to the server's disk.
	Handouts       string
	HandoutsPerLab int
	// FreeBudget is the work a second, in worker actions, that the free runs of all labs
	// share (0: DefaultFreeBudget); a key press in any lab goes before them.
	FreeBudget int
	// Handshake is how long a connection has, from its first byte, to open its lab or the
	// teacher's table before it is closed (0: DefaultHandshake).
	Handshake time.Duration
	// MaxPending is how many connections may wait to open their lab at once; the next is
	// closed at once (0: MaxSessions + 16).
	MaxPending int
	// Shared, when set, makes the server one shared room (shared.go): every attendee's
	// connection is a worker of Shared.Room, at most MaxSessions at once, and the teacher's
	// connection holds the room. NewRoot is then not used.
	Shared *Shared
}

// Server serves labs over SSH.
type Server struct {
	cfg Config
	ssh *ssh.Server
	log *log.Logger

	pace   *pace        // the room's time, shared by every lab's free run
	memory memoryReturn // what closed labs held, given back
	shared *sharedRoom  // the shared room (Config.Shared), nil when each connection is a lab
	stop   context.CancelFunc

	mu       sync.Mutex
	closing  bool
	sessions map[*session]struct{}
	pending  int            // connections that have not opened their lab yet
	handlers sync.WaitGroup // session handlers running
}

// New builds a server; Serve starts it.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.HostKey == nil:
		return nil, errors.New("serve: no host key")
	case cfg.NewRoot == nil && cfg.Shared == nil:
		return nil, errors.New("serve: no way to open a lab (Config.NewRoot is nil)")
	case cfg.Shared != nil && cfg.Shared.Room == nil:
		return nil, errors.New("serve: a shared room needs its room (Config.Shared.Room is nil)")
	case len(cfg.Scenarios) == 0:
		return nil, errors.New("serve: no scenarios")
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 40
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Handshake <= 0 {
		cfg.Handshake = DefaultHandshake
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = cfg.MaxSessions + 16
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Start == "" {
		cfg.Start = cfg.Scenarios[0]
	}
	s := &Server{cfg: cfg, log: log.New(printable{cfg.Log}, "", log.LstdFlags), sessions: map[*session]struct{}{},
		pace: newPace(cfg.FreeBudget, cfg.Now)}
	srv, err := wish.NewServer(
		func(srv *ssh.Server) error { srv.AddHostKey(cfg.HostKey); return nil },
		// Last first: log, admit (pty, limits, scenario), then the lab, whose panics end this
		// session only.
		wish.WithMiddleware(
			recover.MiddlewareWithLogger(s.log,
				bm.MiddlewareWithProgramHandler(s.program, termenv.Ascii),
				activeterm.Middleware(),
			),
			s.admit,
			logging.MiddlewareWithLogger(s.log),
		),
	)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	// No shell, no exec of anything, no SFTP or other subsystem, no port forwarding: only the
	// "session" channel type exists, and the command line is read as a scenario name.
	srv.SubsystemHandlers = map[string]ssh.SubsystemHandler{}
	srv.RequestHandlers = map[string]ssh.RequestHandler{}
	srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": ssh.DefaultSessionHandler}
	if len(cfg.TeacherKeys) > 0 {
		// Public keys are how the teacher is told apart; attendees with a key or without one
		// (keyboard-interactive with no question) are let in alike.
		srv.PublicKeyHandler = func(ssh.Context, ssh.PublicKey) bool { return true }
		srv.KeyboardInteractiveHandler = func(ssh.Context, gossh.KeyboardInteractiveChallenge) bool { return true }
	}
	srv.ConnCallback = s.track
	srv.LocalPortForwardingCallback = func(ssh.Context, string, uint32) bool { return false }
	srv.ReversePortForwardingCallback = func(ssh.Context, string, uint32) bool { return false }
	s.ssh = srv
	if cfg.Shared != nil {
		s.shared = newSharedRoom(s, *cfg.Shared)
		ctx, stop := context.WithCancel(context.Background())
		s.stop = stop
		go s.shared.run(ctx)
	}
	return s, nil
}

// Serve accepts connections on ln until Shutdown. It returns nil after Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	err := s.ssh.Serve(ln)
	if errors.Is(err, ssh.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown refuses new connections, ends every lab (its program stops, its workers stop, its
// database is removed, and the attendee reads one line saying so), then closes the
// connections. It returns when every session handler has returned, or ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	open := slices.Collect(maps.Keys(s.sessions))
	s.mu.Unlock()
	// Close the listeners now; the connections are closed below, once their labs are gone.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.ssh.Shutdown(done)
	for _, ss := range open {
		ss.end(endShutdown)
	}
	finished := make(chan struct{})
	go func() { s.handlers.Wait(); close(finished) }()
	var err error
	select {
	case <-finished:
	case <-ctx.Done():
		err = fmt.Errorf("serve: sessions still closing: %w", ctx.Err())
	}
	if s.stop != nil {
		s.stop()
	}
	_ = s.ssh.Close()
	// Close ended the connections; wait for their goroutines.
	if e := s.ssh.Shutdown(ctx); e != nil && err == nil && !errors.Is(e, ssh.ErrServerClosed) {
		err = fmt.Errorf("serve: connections still closing: %w", e)
	}
	return err
}
