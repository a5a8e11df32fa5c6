// Package ui is the lab: a Bubble Tea screen that steps the engine and shows every row of the
// outbox as the database holds it. Engine work runs in tea.Cmds, one at a time; View only
// renders the frame the last command read back.
package ui

import (
	"context"
	"io"
	"sync"
	"time"

	"leaselab/engine"
)

// Config is what the lab needs from the command line.
type Config struct {
	// Start is the scenario to open first: a built-in name or a file path.
	Start string
	// Scenarios are the built-in scenario names, in the order tab cycles through them.
	Scenarios []string
	// Open builds a fresh session for a scenario on a fresh (or reset) database, closing the
	// previous one. It is called from a tea.Cmd, never from Update or View.
	Open func(ctx context.Context, nameOrFile string) (*engine.Session, error)
	// Explore, when set, is the explore key's search (ExploreFunc); nil: the lab has no
	// explore key.
	Explore ExploreFunc
	// MinPace is the fastest free-run pace offered (0: every pace, full speed included). A
	// shared server sets it, so that one attendee's workers cannot take a core.
	MinPace time.Duration
	// Report, when set, receives the lab's status each time it changes, and the lab takes
	// OfferMsg (a served lab: the teacher's table and offers). It is called from Update: it
	// must not block.
	Report func(LabStatus)
	// In and Out are Run's terminal (nil: the process's own).
	In  io.Reader
	Out io.Writer
	// TranscriptDir is where w writes transcripts: beside the --db database; "" for the
	// working folder.
	TranscriptDir string
	// Handouts, when set, is what a served lab's w may write (a lab on a server writes nothing
	// to the server's disk unless the teacher gave a folder): nil with Served set refuses w.
	Handouts *HandoutQuota
	// TempDB says each scenario opens on a temporary database, removed when the lab closes it:
	// the header says "temporary" rather than naming a file the user never chose.
	TempDB bool
	// Served says the lab runs on a server for someone else's terminal: w writes only within
	// Handouts, and never shows the server's paths.
	Served bool
	// Room, when set, shares a server's time between its labs: free-running work waits for its
	// turn, and what a person asked for goes first (nil: the lab runs alone).
	Room Room
	// Theme names Run's style set (common.Theme): "" or "default", "projector".
	Theme string
}

// Room shares a server's time between the labs it serves. Its methods are called from the
// lab's tea.Cmds and its workers' goroutines, never from Update or View; they must be safe for
// concurrent use.
type Room interface {
	// Admit returns when a free-running lab may do cost units of work (a worker's action is
	// 1, a read of the screen more, by its rows), or with ctx's error when ctx ends first.
	Admit(ctx context.Context, cost int) error
	// Interactive marks a command a person asked for as running in some lab: free-running
	// work waits until done is called (and a moment after, for its screen to be drawn).
	Interactive() (done func())
	// HeldBack says, when the room is slowing free runs down now, how ("" when it is not).
	HeldBack() string
}

// Run opens the lab on cfg.In and cfg.Out and returns when the user quits or ctx ends. It waits
// for the engine command in flight (if any) and stops free-running workers before it returns,
// so the caller may close the session at once.
func Run(ctx context.Context, cfg Config) error {
	p, err := NewLab(ctx, cfg, Terminal{In: cfg.In, Out: cfg.Out, Theme: cfg.Theme})
	if err != nil {
		return err
	}
	return p.Run()
}

// gate counts the engine commands running, so that Close can wait for them before the caller
// closes the session, and refuses new ones once closed.
type gate struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// enter admits one engine command; false once the gate is closed.
func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	return true
}

// leave ends an admitted command.
func (g *gate) leave() { g.wg.Done() }

// close refuses new commands and waits for the running ones.
func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.wg.Wait()
}

// HandoutQuota is a folder of the server's that served labs may write handouts (w) into, and
// how many each lab may write. Safe for concurrent use by one lab's commands.
type HandoutQuota struct {
	Dir     string
	PerLab  int
	mu      sync.Mutex
	written int
}

// take reserves one handout; false when the lab has written its share.
func (q *HandoutQuota) take() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.written >= q.PerLab {
		return false
	}
	q.written++
	return true
}

// giveBack returns a reservation whose handout was not written.
func (q *HandoutQuota) giveBack() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.written--
}
