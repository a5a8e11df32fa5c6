package engine

import (
	"math/rand/v2"
	"testing"
	"time"
)

// Full jitter: the n-th wait is uniform in [0, min(cap, base·2^(n-1))], whole milliseconds,
// drawn from a seeded source: the same seed, the same waits.
func TestBackoffDistribution(t *testing.T) {
	s := DefaultSettings()
	s.Backoff, s.BackoffPolicy, s.BackoffBase, s.BackoffCap = true, BackoffExponential, 100*time.Millisecond, time.Second
	r := rand.New(rand.NewPCG(1, 2))
	for attempt, ceiling := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond,
		4: 800 * time.Millisecond, 5: time.Second, 40: time.Second, 70: time.Second} {
		const n = 4000
		var sum time.Duration
		lo, hi := ceiling, time.Duration(0)
		for range n {
			d := s.BackoffDelay(attempt, r.Float64)
			if d < 0 || d > ceiling || d%time.Millisecond != 0 {
				t.Fatalf("attempt %d: wait %s outside [0, %s] or not whole milliseconds", attempt, d, ceiling)
			}
			sum += d
			lo, hi = min(lo, d), max(hi, d)
		}
		mean := sum / n
		if mean < ceiling*45/100 || mean > ceiling*55/100 || lo > ceiling/20 || hi < ceiling*95/100 {
			t.Errorf("attempt %d: mean %s, range %s..%s; want about %s, spread over [0, %s]", attempt, mean, lo, hi, ceiling/2, ceiling)
		}
	}
	a, b := newJitter(7), newJitter(7)
	for i := range 100 {
		if x, y := s.BackoffDelay(3, a.Float64), s.BackoffDelay(3, b.Float64); x != y {
			t.Fatalf("draw %d: %s and %s from the same seed", i, x, y)
		}
	}
	s.BackoffPolicy = BackoffFixed
	if d := s.BackoffDelay(9, r.Float64); d != 100*time.Millisecond {
		t.Errorf("fixed: %s, want the base", d)
	}
	s.Backoff = false
	if d := s.BackoffDelay(3, r.Float64); d != 0 {
		t.Errorf("backoff off: %s, want none", d)
	}
}
