package engine

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Clocks that disagree (issue 20, item 5). Each worker may run its clock off the scenario's by a
// fixed offset (WorkerSpec.Skew): the times it writes into a lease (a claim's now and until, a
// renewal's, a finalize's) are its own clock's. A worker whose clock runs fast sees another's
// live lease as ended and reclaims it, every statement guarded as it should be.
//
// Two fixes, each a toggle:
//   - db-clock: a lease's times come from one clock for every worker, the database's. In the
//     engine that is the scenario clock without the worker's offset, read at the transaction;
//     a real deployment writes now() (PostgreSQL) or strftime('%Y-%m-%dT%H:%M:%fZ','now')
//     (SQLite) in the statement instead of a time the worker sends. It stops a skewed expiry;
//     it does not stop a paused process, whose lease really did end (stale-owner).
//   - provider-fencing: the provider keeps, per key, the newest lease version that called it,
//     and refuses a call with an older one. It stops the stale side effect; it does not stop
//     the double claim: two workers still held a lease on the message at once.

// MaxSkew bounds a worker's clock offset, either way.
const MaxSkew = time.Hour

// ParseSkew reads a clock offset as `--skew` and a scenario's `skew:` write it: +400ms, -1s.
func ParseSkew(s string) (time.Duration, error) {
	if !strings.HasPrefix(s, "+") && !strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("bad skew %q: want a signed duration, e.g. +400ms or -1s", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad skew %q: want a signed duration, e.g. +400ms or -1s", s)
	}
	if d%time.Millisecond != 0 {
		return 0, fmt.Errorf("bad skew %q: finer than a millisecond", s)
	}
	if d > MaxSkew || d < -MaxSkew {
		return 0, fmt.Errorf("bad skew %q: out of range (at most %s either way)", s, MaxSkew)
	}
	return d, nil
}

// applySkew sets the clock offsets the command line gives (Overrides.Skew).
func (sc *Scenario) applySkew(skew map[string]time.Duration) error {
	for short, d := range skew {
		found := false
		for i := range sc.Workers {
			if w := &sc.Workers[i]; w.Short == short || w.ID == short {
				w.Skew, found = d, true
			}
		}
		if !found {
			return fmt.Errorf("--skew %s: no such worker (the run has %s)", short, strings.Join(sc.WorkerShort(), " "))
		}
	}
	return nil
}

// Skewed reports whether any worker's clock is off the scenario's.
func (sc *Scenario) Skewed() bool {
	for _, w := range sc.Workers {
		if w.Skew != 0 {
			return true
		}
	}
	return false
}

// localNow is the time the worker writes into a lease: its own clock's, or, with db-clock on,
// the one clock every worker shares.
func (w *Worker) localNow(s Settings, now time.Time) time.Time {
	if s.DBClock {
		return now
	}
	return now.Add(w.spec.Skew)
}

// skewed is true while the worker's requests carry a time off the scenario clock's.
func (w *Worker) skewed(s Settings) bool { return w.spec.Skew != 0 && !s.DBClock }

// skewedWall is a Wall whose clock is off by skew, as a hosted worker's is on a machine whose
// clock disagrees with the others': Now is off, the timers are the real ones.
type skewedWall struct {
	Wall
	skew time.Duration
}

func (w skewedWall) Now() time.Time { return w.Wall.Now().Add(w.skew) }

// clocks counts what skewed clocks and provider fencing did in a session.
type clocks struct {
	mu sync.Mutex
	// newest is the newest lease version that called the provider, per key (provider fencing).
	newest map[string]int64
	// earlyReclaims are reclaims of a lease that, by the scenario's clock, had not ended.
	earlyReclaims int
	// fencedCalls are provider calls refused for a stale lease version.
	fencedCalls int
}

// stale records a provider call by lease version v on key and reports whether it is older than
// the newest seen; a stale call is counted and refused.
func (c *clocks) stale(key string, v int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.newest == nil {
		c.newest = map[string]int64{}
	}
	if v < c.newest[key] {
		c.fencedCalls++
		return true
	}
	c.newest[key] = v
	return false
}

// observeClaim counts a reclaim of a lease that had not ended at now, the scenario's time.
func (c *clocks) observeClaim(ev Event, now time.Time) {
	// A lease is live up to and including its LockedUntilUtc.
	if ev.Kind == EvClaim && ev.Outcome == OutcomeReclaimed && !now.After(ev.PriorUntil) {
		c.mu.Lock()
		c.earlyReclaims++
		c.mu.Unlock()
	}
}

func (c *clocks) counts() (early, fenced int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.earlyReclaims, c.fencedCalls
}

// fencedCall is the check of a worker whose provider call was refused for a stale lease
// version: it never learns an answer, so it gives the message up.
func (w *Worker) fencedCall(now time.Time) Event {
	key, v := w.held.IdempotencyKey, w.held.LeaseVersion
	w.phase, w.held, w.leased = w.afterMessage(), Message{}, false
	w.env.world.Add(1)
	return Event{Kind: EvCheck, At: now, Key: key, Outcome: OutcomeFenced, Version: v}
}

// OutcomeFenced: the provider refused a call whose lease version was older than one it had seen.
const OutcomeFenced = "fenced"

// fencedSentence says what a refused call was.
func fencedSentence(e Event) string {
	return fmt.Sprintf("%s called the provider for %s with lease v%d: refused, a newer lease version has called (provider fencing); it gives the message up",
		e.Worker, e.Key, e.Version)
}
