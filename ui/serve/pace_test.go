package serve

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock the test moves: start, and how far it has moved since.
type fakeClock struct {
	start time.Time
	moved atomic.Int64 // nanoseconds
}

func (c *fakeClock) now() time.Time { return c.start.Add(time.Duration(c.moved.Load())) }

func (c *fakeClock) add(d time.Duration) { c.moved.Add(int64(d)) }

// admitted reports whether Admit lets cost through before a short real deadline (the clock
// itself does not move meanwhile).
func admitted(t *testing.T, p *pace, cost int) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := p.Admit(ctx, cost)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Admit: %v", err)
	}
	return err == nil
}

// TestPaceSharesABudget: the free runs get the budget's rate and no more: a tenth of a second's
// worth at once, then only what the clock earns; a wait says it is held back.
func TestPaceSharesABudget(t *testing.T) {
	clk := &fakeClock{start: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	p := newPace(100, clk.now)
	for i := range 10 {
		if !admitted(t, p, 1) {
			t.Fatalf("action %d of the first tenth of a second was not admitted", i+1)
		}
	}
	if admitted(t, p, 1) {
		t.Fatal("an 11th action was admitted with no time passed (budget 100 a second)")
	}
	if got := p.HeldBack(); !strings.Contains(got, "held back by the room") {
		t.Errorf("HeldBack after a wait: %q", got)
	}
	clk.add(50 * time.Millisecond) // earns 5
	n := 0
	for admitted(t, p, 1) {
		n++
	}
	if n != 5 {
		t.Errorf("50 ms at 100 a second admitted %d actions, want 5", n)
	}
	clk.add(2 * heldShown)
	if got := p.HeldBack(); got != "" {
		t.Errorf("HeldBack long after the last wait: %q", got)
	}
	// A big poll is admitted on one unit and paid for by the waits after it.
	for admitted(t, p, 1) { // what the 2 s saved (a tenth of a second's worth at most)
	}
	clk.add(20 * time.Millisecond)
	if !admitted(t, p, 11) {
		t.Fatal("a poll of cost 11 was not admitted with 2 units saved")
	}
	clk.add(70 * time.Millisecond) // earns 7: still 2 below one unit
	if admitted(t, p, 1) {
		t.Error("admitted while the budget was still paying for the poll")
	}
}

// TestPaceKeysGoFirst: while a person's command runs, the free runs get a quarter of the rate
// and nothing saved; a slow command cuts the rate, quick ones give it back.
func TestPaceKeysGoFirst(t *testing.T) {
	clk := &fakeClock{start: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	p := newPace(1000, clk.now)
	done := p.Interactive()
	if admitted(t, p, 1) {
		t.Fatal("admitted at once while a command runs: the saved budget should wait too")
	}
	clk.add(40 * time.Millisecond) // 40 units at the full rate, 10 at a quarter of it
	n := 0
	for admitted(t, p, 1) {
		n++
	}
	if n != 10 {
		t.Errorf("during a command, 40 ms admitted %d, want 10 (a quarter of the rate)", n)
	}
	clk.add(interactiveTarget + time.Millisecond) // the command took too long
	done()
	if p.rate != 750 {
		t.Errorf("rate after a slow command: %v, want 750", p.rate)
	}
	for range 20 {
		d := p.Interactive()
		d()
	}
	if p.rate != 1000 {
		t.Errorf("rate after 20 quick commands: %v, want back to 1000", p.rate)
	}
	for range 100 {
		d := p.Interactive()
		clk.add(time.Second)
		d()
	}
	if p.rate != 50 {
		t.Errorf("rate after 100 slow commands: %v, want its floor 50", p.rate)
	}
	// The release comes interactiveLinger after done: then the whole rate again.
	time.Sleep(3 * interactiveLinger)
	p.mu.Lock()
	left := p.interactive
	p.mu.Unlock()
	if left != 0 {
		t.Errorf("%d commands still counted as running after done and the linger", left)
	}
}
