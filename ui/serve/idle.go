package serve

import (
	"time"

	"github.com/charmbracelet/ssh"
)

// The idle timeout counts key presses, not traffic: a free-running lab draws all the time, and
// is still idle when nobody types.

// keyCounter is the session's input as the lab reads it; every read is a key press for the
// idle timeout.
type keyCounter struct {
	sess ssh.Session
	ss   *session
	now  func() time.Time
}

func (k keyCounter) Read(p []byte) (int, error) {
	n, err := k.sess.Read(p)
	if n > 0 {
		k.ss.lastKey.Store(k.now().UnixNano())
	}
	return n, err
}

// watchIdle ends the lab once it has had no key press for Config.Idle; the returned func stops
// watching.
func (s *Server) watchIdle(ss *session) (stop func()) {
	if s.cfg.Idle <= 0 {
		return func() {}
	}
	every := min(s.cfg.Idle/4, 5*time.Second)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ss.ctx.Done():
				return
			case <-t.C:
				if s.cfg.Now().Sub(time.Unix(0, ss.lastKey.Load())) >= s.cfg.Idle {
					s.log.Printf("%s %s: idle for %s, closing", ss.user, ss.addr, s.cfg.Idle)
					ss.end(endIdle)
					return
				}
			}
		}
	}()
	return func() { close(quit); <-done }
}
