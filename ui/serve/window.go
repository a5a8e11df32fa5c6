package serve

import (
	"sync"

	"github.com/charmbracelet/ssh"

	"leaselab/ui"
)

// A client says its window's size in its pty request and in every window change, as two
// uint32s: 4294967295 rows is a valid request. fitWindow hands every handler after admit (wish's
// Bubble Tea middleware, the lab, the teacher's table) a session whose sizes are fitted to
// ui.MaxWidth×ui.MaxHeight before they reach Bubble Tea, and whose window changes are
// coalesced: a client that sends thousands of them costs one redraw of the latest, not one
// each, and never blocks its connection's request loop on a busy lab.

// fittedSession is an ssh.Session whose Pty reports fitted sizes.
type fittedSession struct {
	ssh.Session
	s *Server

	once  sync.Once
	pty   ssh.Pty
	wins  chan ssh.Window
	hasPt bool
	// noteMu guards asked (the latest oversized window not yet told to the lab) and noting (an
	// OversizeMsg is on its way): a flood of window changes costs one goroutine, not one each,
	// and the lab is told the latest.
	noteMu sync.Mutex
	asked  ssh.Window
	noting bool
}

// fitWindow wraps sess (see fittedSession).
func (s *Server) fitWindow(sess ssh.Session) *fittedSession {
	return &fittedSession{Session: sess, s: s}
}

// Pty is the client's pty with its window fitted, and a channel of its fitted window changes:
// the same channel on every call.
func (f *fittedSession) Pty() (ssh.Pty, <-chan ssh.Window, bool) {
	f.once.Do(f.start)
	return f.pty, f.wins, f.hasPt
}

func (f *fittedSession) start() {
	pty, wins, ok := f.Session.Pty()
	f.pty, f.hasPt = pty, ok
	w, h := pty.Window.Width, pty.Window.Height
	f.pty.Window.Width, f.pty.Window.Height, _ = ui.FitWindow(w, h)
	f.wins = make(chan ssh.Window, 1)
	if wins == nil {
		close(f.wins)
		return
	}
	go f.forward(wins)
}

// forward fits each window change and keeps only the latest one not yet taken. It ends when
// the client's channel is closed (its requests are over) or the session's context is done.
func (f *fittedSession) forward(wins <-chan ssh.Window) {
	defer close(f.wins)
	logged := false
	for {
		var win ssh.Window
		var open bool
		select {
		case win, open = <-wins:
		case <-f.Context().Done():
			return
		}
		if !open {
			return
		}
		asked := win
		var fitted bool
		win.Width, win.Height, fitted = ui.FitWindow(win.Width, win.Height)
		if fitted && !logged {
			logged = true // once a session: a client flooding its window changes must not flood the log
			f.s.log.Printf("%s %s: window %d×%d asked for, drawn in %d×%d (at most %d×%d)", f.User(), f.RemoteAddr(),
				asked.Width, asked.Height, win.Width, win.Height, ui.MaxWidth, ui.MaxHeight)
		}
		select {
		case f.wins <- win:
		default: // the lab has not taken the last one yet: the latest replaces it
			select {
			case <-f.wins:
			default:
			}
			f.wins <- win
		}
		if fitted {
			f.oversize(asked)
		}
	}
}

// oversize tells the connection's lab, if it runs one, that its window was fitted.
func (f *fittedSession) oversize(asked ssh.Window) {
	ss, ok := f.Context().Value(sessionKey{}).(*session)
	if !ok || ss.teacher {
		return
	}
	ss.mu.Lock()
	p := ss.tea
	ss.mu.Unlock()
	if p == nil {
		return
	}
	f.noteMu.Lock()
	defer f.noteMu.Unlock()
	f.asked = asked
	if f.noting {
		return // the goroutine on its way sends this one next
	}
	f.noting = true
	go func() {
		f.noteMu.Lock()
		for {
			w := f.asked
			f.noteMu.Unlock()
			p.Send(ui.OversizeMsg{Width: w.Width, Height: w.Height}) // waits for the lab's loop
			f.noteMu.Lock()
			if f.asked == w {
				f.noting = false
				f.noteMu.Unlock()
				return
			}
		}
	}()
}
