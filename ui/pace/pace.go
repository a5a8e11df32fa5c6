// Package pace is how fast the lab goes on its own: auto-play's speed (Player, p) and how long
// each free-running worker pauses after an action (Free, g). A scenario starts at a pace chosen
// by its size; < and > change it.
package pace

import (
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// After delivers msg after d. The program uses tea.Tick (RealAfter); tests deliver at once.
type After func(d time.Duration, msg tea.Msg) tea.Cmd

// RealAfter delivers msg after d with tea.Tick.
func RealAfter(d time.Duration, msg tea.Msg) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return msg })
}

// TickMsg paces auto-play. ID names the tick loop that sent it: starting or stopping play begins
// a new one, so a tick of an old loop is dropped and two loops never run at once.
type TickMsg struct{ ID int }

// Player is auto-play: whether it plays, its tick loop and its speed.
type Player struct {
	Playing bool
	Pending bool // an auto step is queued or in flight
	id      int
	speed   int             // index into speeds
	speeds  []time.Duration // step intervals, slowest first
}

// DefaultSpeed is auto-play's starting speed, an index into its speeds: 2 steps a second.
const DefaultSpeed = 2

// NewPlayer is auto-play, stopped, at DefaultSpeed.
func NewPlayer() Player {
	return Player{speed: DefaultSpeed, speeds: []time.Duration{2 * time.Second, time.Second, 500 * time.Millisecond,
		250 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond}}
}

// Interval is the time between two auto steps.
func (p Player) Interval() time.Duration { return p.speeds[p.speed] }

// Speed is the speed, an index into the speeds (DefaultSpeed at the start).
func (p Player) Speed() int { return p.speed }

// Reset gives a freshly opened scenario auto-play's default speed.
func (p *Player) Reset() { p.speed = DefaultSpeed }

// Start begins a new tick loop and returns its first tick.
func (p *Player) Start(after After) tea.Cmd {
	p.Playing, p.Pending = true, false
	p.id++
	return p.Next(after)
}

// Next is the loop's next tick.
func (p Player) Next(after After) tea.Cmd { return after(p.Interval(), TickMsg{ID: p.id}) }

// Current reports whether t is a tick of the loop that plays now.
func (p Player) Current(t TickMsg) bool { return t.ID == p.id && p.Playing }

// Stop ends the tick loop: its outstanding tick will be dropped.
func (p *Player) Stop() {
	if p.Playing {
		p.Playing = false
		p.id++
	}
}

// Slower and Faster change the interval; the next tick uses it.
func (p *Player) Slower() { p.speed = max(0, p.speed-1) }

// Faster: see Slower.
func (p *Player) Faster() { p.speed = min(len(p.speeds)-1, p.speed+1) }

// Rate describes the speed in words: "2 steps/s", "1 step every 2s".
func (p Player) Rate() string {
	d := p.Interval()
	if d >= time.Second {
		return fmt.Sprintf("1 step/%s", d)
	}
	return fmt.Sprintf("%d steps/s", time.Second/d)
}

// Free is the free run's pace: the pause each worker takes after every action.
type Free struct {
	i     int // index into paces
	paces []time.Duration
}

// NewFree is the free run's pace before a scenario chose one: 100 ms.
func NewFree() Free {
	return Free{i: 5, paces: []time.Duration{5 * time.Second, 2 * time.Second, time.Second,
		500 * time.Millisecond, 200 * time.Millisecond, 100 * time.Millisecond,
		10 * time.Millisecond, time.Millisecond, 0}}
}

// freeMinute is how long a free run of a scenario should last at its starting pace: long
// enough to press x while a worker holds a row.
const freeMinute = time.Minute

// ActionsPerMessage is about how many actions a message takes a worker: claim, provider call,
// finalize.
const ActionsPerMessage = 3

// For is the starting pace of a scenario of messages rows and workers workers: the slowest at
// which its free run takes at most a minute, each worker doing its share of the actions one
// pace apart. A reset (R) starts from it again, whatever < and > made of it.
func (f Free) For(messages, workers int) Free {
	perWorker := time.Duration((ActionsPerMessage*messages + workers - 1) / max(workers, 1))
	f.i = len(f.paces) - 1
	for i, p := range f.paces {
		if perWorker*p <= freeMinute {
			f.i = i
			break
		}
	}
	return f
}

// Slower and Faster change the pace; the next start uses it.
func (f *Free) Slower() { f.i = max(0, f.i-1) }

// Faster: see Slower.
func (f *Free) Faster() { f.i = min(len(f.paces)-1, f.i+1) }

// Interval is the pause each worker takes after every action (0: full speed).
func (f Free) Interval() time.Duration { return f.paces[f.i] }

// Text describes the pace in words.
func (f Free) Text() string { return Words(f.Interval()) }

// Words describes a pace: "pace 10ms", "full speed".
func Words(d time.Duration) string {
	if d > 0 {
		return "pace " + d.String()
	}
	return "full speed"
}

// Floor drops the paces faster than min (0: none dropped), so that a shared server's workers
// always pause between actions. The slowest pace always stays.
func (f Free) Floor(min time.Duration) Free {
	if min <= 0 {
		return f
	}
	cur := f.Interval()
	var kept []time.Duration
	for _, d := range f.paces {
		if d >= min {
			kept = append(kept, d)
		}
	}
	if len(kept) == 0 {
		kept = []time.Duration{min}
	}
	f.paces, f.i = kept, 0
	for i, d := range kept {
		if d >= cur {
			f.i = i // the fastest kept pace no faster than the one chosen before
		}
	}
	return f
}

// Paces are the paces < and > go through, slowest first.
func (f Free) Paces() []time.Duration { return f.paces }
