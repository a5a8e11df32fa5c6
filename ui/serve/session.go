package serve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"

	"leaselab/engine/room"
	"leaselab/ui"
)

// endReason is why a lab was ended from outside (0: it was not; the attendee quit or left).
type endReason int32

const (
	endNone endReason = iota
	endIdle
	endShutdown
)

// session is one attendee's lab: its root (the database), its program, and what the teacher's
// table and the idle timeout read.
type session struct {
	user, addr, scenario string
	started              time.Time
	root                 Root
	// ctx is the lab's. It is not the connection's: when the connection drops, wish's
	// middleware asks the program to quit, and close cancels ctx once it has.
	ctx     context.Context
	cancel  context.CancelFunc
	lastKey atomic.Int64 // unix nanoseconds of the last input
	reason  atomic.Int32 // an endReason

	teacher bool // the teacher's table, not a lab: no root, not counted in MaxSessions

	mu   sync.Mutex
	prog *ui.Program  // the lab (nil for the teacher's table)
	tea  *tea.Program // the program wish runs
	kill *time.Timer  // end's deadline for the program to quit
	hang *time.Timer  // end's deadline for the handler to return, then the connection is closed
	// hangUp closes the connection (nil: nothing to close): the last resort of end, when the
	// handler is stuck on a client that does not read or answer.
	hangUp func()
	status ui.LabStatus // the lab's last report
}

type sessionKey struct{}

// quitWithin is how long a lab asked to quit has before its context is cancelled, which kills it.
const quitWithin = 2 * time.Second

// end ends the lab from outside: its program is asked to quit (so it ends as after q, without
// an error), and killed if it has not within quitWithin. The handler cleans up.
//
// Whatever the lab's program does, the connection is closed 2×quitWithin after end if the
// handler has not returned by then: ending a lab ends it, even on a client that never reads.
func (ss *session) end(why endReason) {
	ss.reason.CompareAndSwap(int32(endNone), int32(why))
	ss.mu.Lock()
	p := ss.tea
	if p != nil && ss.kill == nil {
		ss.kill = time.AfterFunc(quitWithin, ss.cancel)
	}
	if ss.hang == nil && ss.hangUp != nil {
		ss.hang = time.AfterFunc(2*quitWithin, ss.hangUp)
	}
	ss.mu.Unlock()
	if p == nil {
		ss.cancel() // not built yet: it will be built on a cancelled context and end at once
		return
	}
	go p.Quit() // Quit waits for the program's loop: Shutdown must not wait on each lab in turn
}

// report keeps the lab's status for the teacher's table; it is the lab's Config.Report.
func (ss *session) report(st ui.LabStatus) {
	ss.mu.Lock()
	ss.status = st
	ss.mu.Unlock()
}

// offer sends the lab an offer without waiting for it to be taken.
func (ss *session) offer(msg ui.OfferMsg) bool {
	ss.mu.Lock()
	p := ss.tea
	ss.mu.Unlock()
	if p == nil || ss.teacher {
		return false
	}
	// Send waits for the program's loop; a busy lab must not hold the teacher's screen.
	go p.Send(msg)
	return true
}

func (ss *session) info() Info {
	ss.mu.Lock()
	st := ss.status
	ss.mu.Unlock()
	in := Info{User: ss.user, Addr: ss.addr, Scenario: ss.scenario, Started: ss.started,
		LastKey: time.Unix(0, ss.lastKey.Load()), Status: st}
	if st.Scenario != "" {
		in.Scenario = st.Scenario
	}
	if ss.root != nil {
		in.DBPath = ss.root.DBPath()
	}
	return in
}

// close stops the lab's program (workers, write gate), then closes its database and removes it.
func (ss *session) close() {
	ss.cancel()
	ss.mu.Lock()
	p := ss.prog
	if ss.kill != nil {
		ss.kill.Stop()
	}
	if ss.hang != nil {
		ss.hang.Stop()
	}
	ss.mu.Unlock()
	if p != nil {
		p.Close()
	}
	if ss.root != nil {
		_ = ss.root.Close()
	}
}

// admit is the middleware that decides whether a connection gets a lab: it needs a pty, a known
// scenario, and room. It owns the lab's lifetime: whatever the inner handlers do (quit, a
// dropped connection, a recovered panic), the lab is closed and its database removed here.
func (s *Server) admit(next ssh.Handler) ssh.Handler {
	return func(raw ssh.Session) {
		opened(raw)
		defer closeConnSoon(raw)
		sess := s.fitWindow(raw) // every handler after this one sees the window fitted (window.go)
		args := sess.Command()
		if len(args) == 1 && args[0] == "list" {
			wish.Println(sess, "scenarios: "+strings.Join(s.cfg.Scenarios, ", "))
			return
		}
		if _, _, ok := sess.Pty(); !ok {
			what := " [scenario]"
			if s.shared != nil {
				what = "" // one room: no scenario to name
			}
			s.refuse(sess, "leaselab needs a terminal: connect with  "+s.cfg.Connect+what+"  (the -t asks for one)")
			return
		}
		if pty, _, _ := raw.Pty(); pty.Window.Width > ui.MaxWidth || pty.Window.Height > ui.MaxHeight {
			wish.Printf(sess, "leaselab: your terminal asks for %d×%d cells; the lab draws in at most %d×%d, at its top left\n",
				pty.Window.Width, pty.Window.Height, ui.MaxWidth, ui.MaxHeight)
		}
		if s.isTeacher(sess) {
			s.serveTeacher(sess, next)
			return
		}
		if s.shared != nil {
			s.shared.serveSeat(sess, next)
			return
		}
		name := s.cfg.Start
		if len(args) > 0 {
			name = args[0]
		}
		if len(args) > 1 || !slices.Contains(s.cfg.Scenarios, name) {
			s.refuse(sess, fmt.Sprintf("unknown scenario %q: choose one of %s, e.g.  %s %s",
				strings.Join(args, " "), strings.Join(s.cfg.Scenarios, ", "), s.cfg.Connect, s.cfg.Scenarios[0]))
			return
		}
		ss := s.enter(sess, func(ss *session) { ss.scenario, ss.root = name, s.cfg.NewRoot() })
		if ss == nil {
			return
		}
		defer s.unregister(ss)
		sess.Context().SetValue(sessionKey{}, ss)
		stopIdle := s.watchIdle(ss)
		next(sess)
		stopIdle()
		ss.close()
		s.memory.soon()
		ss.mu.Lock()
		quit := ss.status.Quit
		ss.mu.Unlock()
		switch endReason(ss.reason.Load()) {
		case endNone:
			if !quit && sess.Context().Err() == nil {
				// Neither q nor a dropped connection: Bubble Tea recovered a panic (its stack
				// is on the server's output).
				s.log.Printf("%s %s: lab %s ended on an error", ss.user, ss.addr, ss.info().Scenario)
				wish.Println(sess, "leaselab: this lab stopped on an internal error (the server logged it); its database is gone. Connect again for a new one.")
			}
		case endIdle:
			wish.Printf(sess, "leaselab: closed after %s without a key press; its database is gone. %s to start again.\n", s.cfg.Idle, s.cfg.Connect)
		case endShutdown:
			wish.Println(sess, "leaselab: the server is shutting down; your lab and its database are gone. Thank you!")
		}
		s.log.Printf("%s %s: lab %s closed, database removed", ss.user, ss.addr, ss.info().Scenario)
	}
}

// enter makes the connection's session, its idle clock started now, lets kind say what it is
// (a lab's scenario and root, or the teacher's table), and registers it. A session the server
// has no room for is refused (its context cancelled, the connection told why) and enter
// returns nil; otherwise the caller unregisters it when its handler is done.
func (s *Server) enter(sess ssh.Session, kind func(ss *session)) *session {
	ctx, cancel := context.WithCancel(context.Background())
	ss := &session{user: sess.User(), addr: sess.RemoteAddr().String(), started: s.cfg.Now(),
		ctx: ctx, cancel: cancel, hangUp: hangUpFunc(sess)}
	kind(ss)
	ss.lastKey.Store(ss.started.UnixNano())
	if err := s.register(ss); err != nil {
		cancel()
		s.refuse(sess, err.Error())
		return nil
	}
	return ss
}

// refuse prints one line and ends the session with exit status 1.
func (s *Server) refuse(sess ssh.Session, line string) {
	s.log.Printf("%s %s refused: %s", sess.User(), sess.RemoteAddr(), line)
	wish.Println(sess, line)
	_ = sess.Exit(1)
}

// program builds the connection's lab for wish's Bubble Tea middleware: the session's own
// renderer (its TERM and NO_COLOR), its pty's size, its input counted for the idle timeout.
func (s *Server) program(sess ssh.Session) *tea.Program {
	ss, ok := sess.Context().Value(sessionKey{}).(*session)
	if !ok {
		return nil // not admitted: the middleware then does nothing
	}
	if ss.teacher && s.shared != nil {
		return s.shared.teacherProgram(sess, ss)
	}
	if ss.teacher {
		return s.teacherProgram(sess, ss)
	}
	if seat, ok := sess.Context().Value(seatKey{}).(*room.Seat); ok {
		return s.shared.seatProgram(sess, ss, seat)
	}
	pty, _, _ := sess.Pty()
	var handouts *ui.HandoutQuota
	if s.cfg.Handouts != "" {
		handouts = &ui.HandoutQuota{Dir: s.cfg.Handouts, PerLab: max(1, s.cfg.HandoutsPerLab)}
	}
	p, err := ui.NewLab(ss.ctx, ui.Config{
		Start: ss.scenario, Scenarios: s.cfg.Scenarios, Open: ss.root.Open, MinPace: s.cfg.MinPace,
		Report: ss.report, Room: s.pace, Served: true, Handouts: handouts, TempDB: true,
	}, ui.Terminal{
		In: keyCounter{sess, ss, s.cfg.Now}, Out: sess, Renderer: sessionRenderer(sess), Theme: s.cfg.Theme,
		Width: pty.Window.Width, Height: pty.Window.Height,
	})
	if err != nil {
		s.log.Printf("%s %s: %v", ss.user, ss.addr, err)
		return nil
	}
	ss.mu.Lock()
	ss.prog, ss.tea = p, p.Tea()
	ss.mu.Unlock()
	return p.Tea()
}
