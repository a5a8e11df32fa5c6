package serve

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// The room's time. Every lab of a server runs in one process on the server's cores; 25 labs
// free-running many-workers (8 workers each at the default pace: 2,000 transactions a second,
// and 250 screens of 500 rows) want more than a small machine has, and a key press in a 26th
// lab then waits behind them for seconds. So the free runs of all labs share one budget of
// work a second (a worker's action is one unit, a poll of the screen more, by its rows), and a
// command a person asked for in any lab goes first: while one runs, and a moment after (its
// screen is drawn then), free-running work waits. Free runs slow down; keys do not.

// DefaultFreeBudget is the work a second, in worker actions, that all free runs of a server
// share when Config.FreeBudget is 0: about a third of what two cores do (an action with its
// share of the screens costs about 1 ms there), so keys always find a core.
const DefaultFreeBudget = 1200

// interactiveLinger is how long free runs still wait after a person's command is done: the lab
// draws its screen then.
const interactiveLinger = 30 * time.Millisecond

// interactiveShare is the part of the budget free runs still get while a person's command runs.
const interactiveShare = 0.25

// interactiveMax bounds how long one command can hold the free runs back, whatever happens to
// it.
const interactiveMax = 2 * time.Second

// heldShown is how long after its last wait the room still says it holds the free runs back.
const heldShown = time.Second

// pace is the room's budget: a token bucket of units refilled at rate a second (up to a tenth
// of a second's worth), and a count of the commands people are waiting for. The rate follows
// how long those commands take, which is what a person feels: one slower than interactiveTarget
// cuts it by a quarter (down to a twentieth of the budget), one within it gives back a
// fiftieth of the budget (up to the whole). So on a machine busy with other work the room
// yields more. It implements ui.Room. Safe for concurrent use.
type pace struct {
	budget float64 // the most work a second the free runs may have
	rate   float64 // what they have now
	now    func() time.Time

	mu          sync.Mutex
	tokens      float64
	last        time.Time
	interactive int
	wake        chan struct{} // closed (and replaced) when the last interactive command ends
	heldAt      time.Time     // when an admission last had to wait
}

func newPace(rate int, now func() time.Time) *pace {
	if rate <= 0 {
		rate = DefaultFreeBudget
	}
	return &pace{budget: float64(rate), rate: float64(rate), now: now, tokens: float64(rate) / 10, last: now(), wake: make(chan struct{})}
}

// refill adds what the time since the last refill earned: the whole rate, or the share left
// to free runs while a person's command runs. p.mu must be held.
func (p *pace) refill(now time.Time) {
	if d := now.Sub(p.last); d > 0 {
		p.tokens = min(p.rate/10, p.tokens+d.Seconds()*p.earning())
		p.last = now
	}
}

// earning is the rate the budget refills at now. p.mu must be held.
func (p *pace) earning() float64 {
	if p.interactive > 0 {
		return p.rate * interactiveShare
	}
	return p.rate
}

// Admit waits until the budget has a unit left, then takes cost units (the budget may go below
// zero: a big poll is paid for by the waits after it). While a person's command runs, the
// budget refills at interactiveShare of its rate, so that a room that types all the time
// still lets its free runs move.
func (p *pace) Admit(ctx context.Context, cost int) error {
	for {
		p.mu.Lock()
		now := p.now()
		p.refill(now)
		if p.tokens >= 1 {
			p.tokens -= float64(cost)
			p.mu.Unlock()
			return nil
		}
		p.heldAt = now
		wake := p.wake
		wait := time.Duration((1 - p.tokens) / p.earning() * float64(time.Second))
		p.mu.Unlock()
		t := time.NewTimer(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// Interactive holds free-running work back until done is called and interactiveLinger after,
// or interactiveMax at most.
func (p *pace) Interactive() (done func()) {
	p.mu.Lock()
	start := p.now()
	p.refill(start)
	p.interactive++
	p.tokens = min(p.tokens, 0) // what the free runs had saved waits too
	p.mu.Unlock()
	var once sync.Once
	release := func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.interactive--; p.interactive == 0 {
				close(p.wake)
				p.wake = make(chan struct{})
			}
		})
	}
	guard := time.AfterFunc(interactiveMax, release)
	return func() {
		guard.Stop()
		p.mu.Lock()
		p.adapt(p.now().Sub(start))
		p.mu.Unlock()
		time.AfterFunc(interactiveLinger, release)
	}
}

// interactiveTarget is how long a person's command may take before the room gives the free
// runs less.
const interactiveTarget = 40 * time.Millisecond

// adapt sets the rate from how long a person's command took. p.mu must be held.
func (p *pace) adapt(took time.Duration) {
	if took > interactiveTarget {
		p.rate = max(p.budget/20, p.rate*0.75)
	} else {
		p.rate = min(p.budget, p.rate+p.budget/50)
	}
}

// HeldBack says how the room slows the free runs down, while it does.
func (p *pace) HeldBack() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.heldAt.IsZero() || p.now().Sub(p.heldAt) > heldShown {
		return ""
	}
	return fmt.Sprintf("held back by the room (its free runs share %d actions/s now)", int(p.rate))
}

// memoryReturn gives the memory closed labs held back to the operating system soon after they
// close: Go's scavenger would take minutes, and a room's server should shrink when its
// attendees leave. Labs that close together (a room leaving) are answered with one collection.
type memoryReturn struct {
	mu      sync.Mutex
	pending bool
}

// memoryReturnAfter is how long after a lab closes its memory is given back.
const memoryReturnAfter = 500 * time.Millisecond

// memoryReturnAgain is when it is given back a second time.
const memoryReturnAgain = 4 * time.Second

// soon gives the memory back memoryReturnAfter from now, unless that is already planned.
func (r *memoryReturn) soon() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending {
		return
	}
	r.pending = true
	time.AfterFunc(memoryReturnAfter, func() {
		r.mu.Lock()
		r.pending = false
		r.mu.Unlock()
		debug.FreeOSMemory()
		// What the lab's goroutines and connections still held is free a few seconds later
		// (stacks, the SSH session's buffers): once more then.
		time.AfterFunc(memoryReturnAgain, debug.FreeOSMemory)
	})
}
