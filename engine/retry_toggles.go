package engine

import "time"

// The retry toggles (issue 20): what a failed attempt does next. They are entries of the toggle
// registry (toggles.go: LookupToggle finds them, so scenario files, `set` steps, --flags and an
// expect block's "when" read them from here), kept apart from Toggles(), the lab's keys and
// header, until the lab shows them: a lab screen has no place for them yet.
const (
	// ToggleBackoff: a failed attempt waits before the message may be claimed again.
	ToggleBackoff = "backoff"
	// ToggleDeadLetter: a message that has failed MaxAttempts times is parked.
	ToggleDeadLetter = "dead-letter"
)

// retryToggles are the registry's toggles of a message's retries, in the order the help lists
// them. Built once and never changed.
var retryToggles = [...]Toggle{
	{Name: ToggleBackoff, Words: "retry backoff", Letter: "B", Short: "backoff", Tiny: "back",
		Off:   "a failed attempt's message is claimable again at once: the workers hammer a failing provider",
		On:    "a failed attempt sets NextAttemptUtc (backoff-policy, full jitter, capped): claims wait for it",
		field: func(s *Settings) *bool { return &s.Backoff }},
	{Name: ToggleDeadLetter, Words: "dead letters", Letter: "D", Short: "dead-ltr", Tiny: "dlq",
		Off:   "no attempt limit: a poison message is retried for ever",
		On:    "after max-attempts failed attempts the message is DeadLettered: never claimed again, until a redrive",
		field: func(s *Settings) *bool { return &s.DeadLetter }},
}

// RetryToggleNames lists the retry toggles (backoff, dead-letter): flags and scenario keys like
// any toggle, not yet keys of the lab.
func RetryToggleNames() []string {
	names := make([]string, 0, len(retryToggles))
	for _, t := range retryToggles {
		names = append(names, t.Name)
	}
	return names
}

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
