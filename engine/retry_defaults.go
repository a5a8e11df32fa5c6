package engine

import "time"

// Backoff policies, as backoff-policy names them. With the backoff toggle off the policy is
// "none" whatever this says.
const (
	BackoffFixed       = "fixed"       // every retry waits BackoffBase
	BackoffExponential = "exponential" // full jitter: a random wait in [0, min(cap, base·2^(n-1)))
)

// Retry defaults: what a scenario that turns the toggles on without naming the figures gets.
const (
	defaultBackoffBase = 100 * time.Millisecond
	defaultBackoffCap  = 2 * time.Second
	defaultMaxAttempts = 3
)
