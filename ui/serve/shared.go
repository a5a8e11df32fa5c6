package serve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"

	"leaselab/engine/room"
	"leaselab/engine/words"
)

// The shared room (serve --shared): every attendee's connection is a seat of one room.Room — a
// worker of one outbox — instead of a lab of its own; the teacher's connection holds the room.
// One goroutine reads the room into a frame whenever it changed (at most every frameEvery) and
// hands it to every screen through a mailbox that keeps only the latest: a slow or silent
// client holds its own screen back, never the room, and never queues frames.

// Shared configures the shared room.
type Shared struct {
	Room *room.Room
	// IdleCrash is how long an attendee may go without a key press before their worker
	// crashes to the room (0: never); the teacher changes it with i.
	IdleCrash time.Duration
	// Transcripts is the folder the teacher's w writes the room's transcript into, at most
	// MaxTranscripts of them (0: DefaultMaxTranscripts); Files creates them.
	Transcripts    string
	MaxTranscripts int
	Files          words.Files
}

// DefaultMaxTranscripts bounds the transcripts a room writes.
const DefaultMaxTranscripts = 20

// Pacing of the room's frames: read at most every frameEvery when the room changed, with the
// engine's summary (its checks) at most every summaryEvery, and always while the room is
// paused or its round ended.
const (
	frameEvery = 50 * time.Millisecond
	// frameShare bounds the time the frames take: the next is read no sooner than frameShare
	// times as long as the last one took (the read of every row and the summary), so that a
	// room of thousands of rows reads fewer frames and leaves the cores to the keys: reading
	// 3,750 rows every 50 ms took 43 % of the CPU of the 30-attendee benchmark.
	frameShare   = 8
	summaryEvery = time.Second
	idleEvery    = time.Second
	frameEvents  = 6
)

// sharedRoom is the server's side of the room.
type sharedRoom struct {
	s    *Server
	cfg  Shared
	room *room.Room

	idle      atomic.Int64 // the idle limit now, in nanoseconds (0: never)
	resumedAt atomic.Int64 // when the room last went on after a pause (unix ns): idle counts from then

	mu      sync.Mutex
	boxes   map[*mailbox]struct{}
	last    *room.Frame
	written int // transcripts written
	seats   map[*session]*room.Seat
}

func newSharedRoom(s *Server, cfg Shared) *sharedRoom {
	if cfg.MaxTranscripts <= 0 {
		cfg.MaxTranscripts = DefaultMaxTranscripts
	}
	sr := &sharedRoom{s: s, cfg: cfg, room: cfg.Room, boxes: map[*mailbox]struct{}{}, seats: map[*session]*room.Seat{}}
	sr.idle.Store(int64(cfg.IdleCrash))
	return sr
}

// run reads frames and watches idle attendees until ctx ends. A frame is read when the room
// changed; the engine's summary with it at most every summaryEvery (the frames between carry the
// last one), and once more when the room has been still that long, so that the last frame's
// checks are the room's as it stands. While the room is paused every frame has its own.
func (sr *sharedRoom) run(ctx context.Context) {
	tick := time.NewTicker(frameEvery)
	defer tick.Stop()
	var (
		shown, judged uint64 // the Seq of the last frame, and of the last one with its own summary
		read          bool
		summarized    time.Time
		paused        bool
		lastIdle      time.Time
		nextFrame     time.Time // not before: frameShare times the last frame's cost after it
	)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := sr.s.cfg.Now()
		every := idleEvery // a quarter of a short limit, so that it is kept to within a quarter
		if limit := time.Duration(sr.idle.Load()); limit > 0 {
			every = min(every, max(limit/4, frameEvery))
		}
		if now.Sub(lastIdle) >= every {
			lastIdle = now
			sr.crashIdle(now)
		}
		seq := sr.room.Seq()
		due := now.Sub(summarized) >= summaryEvery
		if read && seq == shown && (judged == shown || !due) || now.Before(nextFrame) {
			continue
		}
		wantSum := due || sr.room.Paused()
		f, err := sr.room.Frame(ctx, room.FrameOptions{Events: frameEvents, Summary: wantSum})
		if err != nil {
			if !errors.Is(err, room.ErrClosed) && ctx.Err() == nil {
				sr.s.log.Printf("the shared room: %v", err)
			}
			continue
		}
		if wantSum {
			summarized, judged = now, f.Seq
		} else if last := sr.latest(); last != nil {
			f.Judge(last.Summary)
		}
		if paused && !f.Paused {
			sr.resumedAt.Store(now.UnixNano())
		}
		nextFrame = now.Add(frameShare * sr.s.cfg.Now().Sub(now))
		shown, read, paused = f.Seq, true, f.Paused
		sr.publish(f)
	}
}

// latest is the last frame published (nil before the first).
func (sr *sharedRoom) latest() *room.Frame {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return sr.last
}

// publish hands f to every screen.
func (sr *sharedRoom) publish(f *room.Frame) {
	sr.mu.Lock()
	sr.last = f
	boxes := slices.Collect(maps.Keys(sr.boxes))
	sr.mu.Unlock()
	for _, b := range boxes {
		b.post(f)
	}
}

// subscribe adds a screen; it gets the latest frame at once.
func (sr *sharedRoom) subscribe(b *mailbox) {
	sr.mu.Lock()
	sr.boxes[b] = struct{}{}
	last := sr.last
	sr.mu.Unlock()
	if last != nil {
		b.post(last)
	}
}

func (sr *sharedRoom) unsubscribe(b *mailbox) {
	sr.mu.Lock()
	delete(sr.boxes, b)
	sr.mu.Unlock()
}

// crashIdle crashes, to the room, the workers of attendees idle past the limit.
func (sr *sharedRoom) crashIdle(now time.Time) {
	limit := time.Duration(sr.idle.Load())
	if limit <= 0 || sr.room.Paused() {
		return
	}
	from := time.Unix(0, sr.resumedAt.Load())
	sr.mu.Lock()
	var idle []*room.Seat
	for ss, seat := range sr.seats {
		last := time.Unix(0, ss.lastKey.Load())
		if last.Before(from) {
			last = from
		}
		if now.Sub(last) >= limit {
			idle = append(idle, seat)
		}
	}
	sr.mu.Unlock()
	for _, seat := range idle {
		if seat.Present() {
			sr.s.log.Printf("%s: idle for %s in the shared room, crashed to the room", seat.Name(), limit)
			seat.Leave(room.AwayIdle)
		}
	}
}

// serveSeat gives the connection a seat of the room for its lifetime.
func (sr *sharedRoom) serveSeat(sess ssh.Session, next ssh.Handler) {
	if args := sess.Command(); len(args) > 0 {
		sr.s.refuse(sess, fmt.Sprintf("this server runs one shared room (%s): connect with  %s  and no command", sr.s.cfg.Start, sr.s.cfg.Connect))
		return
	}
	ss := sr.s.enter(sess, func(ss *session) { ss.scenario = sr.s.cfg.Start })
	if ss == nil {
		return
	}
	defer sr.s.unregister(ss)
	seat, err := sr.room.Join(ss.ctx, sess.User())
	if err != nil {
		ss.cancel()
		sr.s.refuse(sess, "leaselab: "+err.Error())
		return
	}
	sr.mu.Lock()
	sr.seats[ss] = seat
	sr.mu.Unlock()
	sr.s.log.Printf("%s %s: seat %s in the shared room", ss.user, ss.addr, seat.Name())
	sess.Context().SetValue(sessionKey{}, ss)
	sess.Context().SetValue(seatKey{}, seat)
	stopIdle := sr.s.watchIdle(ss)
	next(sess)
	stopIdle()
	ss.mu.Lock()
	quit := ss.status.Quit
	ss.mu.Unlock()
	sr.mu.Lock()
	delete(sr.seats, ss)
	sr.mu.Unlock()
	why := room.AwayDisconnected
	switch {
	case quit:
		why = room.AwayLeft
	case endReason(ss.reason.Load()) == endIdle:
		why = room.AwayIdle
	}
	if endReason(ss.reason.Load()) == endShutdown {
		why = "the server is shutting down" // the room closes with it: the seat stays as it was
	} else {
		seat.Leave(why)
	}
	ss.close()
	switch endReason(ss.reason.Load()) {
	case endIdle:
		wish.Printf(sess, "leaselab: closed after %s without a key press; your worker crashed to the room. %s to come back.\n", sr.s.cfg.Idle, sr.s.cfg.Connect)
	case endShutdown:
		wish.Println(sess, "leaselab: the server is shutting down; the room is closed. Thank you!")
	}
	sr.s.log.Printf("%s %s: left the shared room (%s)", ss.user, ss.addr, why)
}

type seatKey struct{}

// mailbox is one screen's inbox of frames: it holds the latest frame not yet taken, never
// more. One goroutine at a time hands it to the screen's program (Send waits for the program's
// loop); frames that arrive meanwhile replace each other.
type mailbox struct {
	send func(f *room.Frame) // hands a frame to the program, waiting for it

	mu      sync.Mutex
	latest  *room.Frame
	sending bool
}

// post leaves f for the screen, replacing a frame it has not taken yet.
func (b *mailbox) post(f *room.Frame) {
	b.mu.Lock()
	b.latest = f
	if b.sending {
		b.mu.Unlock()
		return
	}
	b.sending = true
	b.mu.Unlock()
	go b.deliver()
}

func (b *mailbox) deliver() {
	for {
		b.mu.Lock()
		f := b.latest
		b.latest = nil
		if f == nil {
			b.sending = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.send(f)
	}
}
