package ui

import (
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// tickMsg paces auto-play. id names the tick loop that sent it: starting or stopping play begins
// a new id, so a tick of an old loop is dropped and two loops never run at once.
type tickMsg struct{ id int }

// afterFunc delivers msg after d. The program uses tea.Tick; tests deliver at once.
type afterFunc func(d time.Duration, msg tea.Msg) tea.Cmd

func realAfter(d time.Duration, msg tea.Msg) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return msg })
}

// player is auto-play: whether it plays, its tick loop id and its speed.
type player struct {
	playing bool
	id      int
	speed   int             // index into speeds
	speeds  []time.Duration // step intervals, slowest first
	pending bool            // an auto step is queued or in flight
}

// defaultSpeed is auto-play's starting speed, an index into player.speeds: 2 steps a second.
const defaultSpeed = 2

func newPlayer() player {
	p := player{speeds: []time.Duration{2 * time.Second, time.Second, 500 * time.Millisecond,
		250 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond}}
	p.speed = defaultSpeed
	return p
}

// interval is the time between two auto steps.
func (p player) interval() time.Duration { return p.speeds[p.speed] }

// start begins a new tick loop and returns its first tick.
func (p *player) start(after afterFunc) tea.Cmd {
	p.playing, p.pending = true, false
	p.id++
	return after(p.interval(), tickMsg{id: p.id})
}

// stop ends the tick loop: its outstanding tick will be dropped.
func (p *player) stop() {
	if p.playing {
		p.playing = false
		p.id++
	}
}

// slower and faster change the interval; the next tick uses it.
func (p *player) slower() { p.speed = max(0, p.speed-1) }
func (p *player) faster() { p.speed = min(len(p.speeds)-1, p.speed+1) }

// rate describes the speed in words: "2 steps/s", "1 step every 2s".
func (p player) rate() string {
	d := p.interval()
	if d >= time.Second {
		return fmt.Sprintf("1 step/%s", d)
	}
	return fmt.Sprintf("%d steps/s", time.Second/d)
}
