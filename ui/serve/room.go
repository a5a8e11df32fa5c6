package serve

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"leaselab/engine/words"
	"leaselab/ui"
)

// The room: the labs open now, as the teacher's table and the limits see them.

// Info describes one open lab.
type Info struct {
	User, Addr, Scenario string
	DBPath               string
	Started, LastKey     time.Time
	Status               ui.LabStatus // what the lab shows, as it last reported it
}

// Sessions lists the open labs, oldest first (not the teacher's tables).
func (s *Server) Sessions() []Info {
	s.mu.Lock()
	out := make([]Info, 0, len(s.sessions))
	for ss := range s.sessions {
		if !ss.teacher {
			out = append(out, ss.info())
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Info) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.Addr, b.Addr)
	})
	return out
}

// Offer offers scenario name to every open lab; each attendee opens it with a key press, or
// not. It returns how many labs it was offered to.
func (s *Server) Offer(name, from string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for ss := range s.sessions {
		if ss.offer(ui.OfferMsg{Scenario: name, From: from}) {
			n++
		}
	}
	return n
}

// labs counts the open labs. s.mu must be held.
func (s *Server) labs() int {
	n := 0
	for ss := range s.sessions {
		if !ss.teacher {
			n++
		}
	}
	return n
}

// register admits one lab, unless the server is closing or full.
func (s *Server) register(ss *session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return errors.New("the server is shutting down: no new labs")
	case !ss.teacher && s.labs() >= s.cfg.MaxSessions && s.shared != nil:
		return fmt.Errorf("sorry, the room is full: %d attendees are connected, the most this room takes. Try again in a minute", s.labs())
	case !ss.teacher && s.labs() >= s.cfg.MaxSessions:
		return fmt.Errorf("sorry, the room is full: %d labs are open, the most this server runs at once. Try again in a minute", s.labs())
	}
	s.sessions[ss] = struct{}{}
	s.handlers.Add(1)
	return nil
}

// unregister forgets a lab whose handler is done.
func (s *Server) unregister(ss *session) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
	s.handlers.Done()
}

// printable writes log lines with words.Escape: SSH user names and commands are the client's to
// choose, escape sequences, bidi overrides (U+202E) and line feeds included, and the log is a
// terminal or a file others read line by line. Only the line's own final newline is kept, so a
// name cannot split a line and forge the next.
type printable struct{ w io.Writer }

func (p printable) Write(b []byte) (int, error) {
	body, nl := strings.CutSuffix(string(b), "\n")
	line := words.Escape(body)
	if nl {
		line += "\n"
	}
	if _, err := io.WriteString(p.w, line); err != nil {
		return 0, err
	}
	return len(b), nil
}
