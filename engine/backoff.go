package engine

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// describeRetry names the retry settings for Describe: only those a run has turned on, so that a
// run without retries is described as before.
func (s Settings) describeRetry() []string {
	var parts []string
	if s.Backoff {
		parts = append(parts, "backoff="+s.BackoffPolicy, "backoff-base="+s.BackoffBase.String())
		if s.BackoffPolicy == BackoffExponential {
			parts = append(parts, "backoff-cap="+s.BackoffCap.String())
		}
	}
	if s.DeadLetter {
		parts = append(parts, "max-attempts="+strconv.Itoa(s.MaxAttempts))
	}
	return parts
}

// ParseBackoffPolicy reads a backoff policy: none (the backoff toggle off), fixed or
// exponential. on says whether the backoff toggle is on.
func ParseBackoffPolicy(v string) (policy string, on bool, err error) {
	switch v {
	case "none":
		return BackoffExponential, false, nil
	case BackoffFixed, BackoffExponential:
		return v, true, nil
	}
	return "", false, fmt.Errorf("want none, fixed or exponential, got %q", v)
}

// BackoffDelay is how long the message waits after its attempt-th failed attempt (1 for the
// first): none with the backoff off; BackoffBase with the fixed policy; with the exponential,
// full jitter (AWS's "Exponential Backoff and Jitter"): a uniformly random wait in
// [0, min(cap, base·2^(attempt-1))], in whole milliseconds. r draws the jitter: [0, 1).
func (s Settings) BackoffDelay(attempt int, r func() float64) time.Duration {
	if !s.Backoff || attempt < 1 {
		return 0
	}
	if s.BackoffPolicy == BackoffFixed {
		return s.BackoffBase
	}
	ceiling := s.BackoffCap
	if attempt-1 < 40 {
		if d := s.BackoffBase << (attempt - 1); d > 0 && d < ceiling {
			ceiling = d
		}
	}
	ms := ceiling.Milliseconds()
	return time.Duration(int64(r()*float64(ms+1))) * time.Millisecond
}

// jitter is a session's seeded source of retry jitter and failure draws, apart from the
// scheduler's: a run without failures draws nothing from it, so its schedule is as before. Safe
// for concurrent use (free-running workers share it).
type jitter struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func newJitter(seed int64) *jitter {
	return &jitter{rng: rand.New(rand.NewPCG(uint64(seed), 0xbac0ff))}
}

// Float64 draws from [0, 1).
func (j *jitter) Float64() float64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.rng.Float64()
}
