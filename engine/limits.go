package engine

import (
	"fmt"
)

// What a scenario may ask for, checked before it runs: a file read whole, its messages and
// workers seeded and worked one by one. The steps' own limits are in parse_steps.go; what a run
// may do while it runs is bounded in watchdog.go.

// MaxMessages and MaxWorkers bound what a scenario may ask for.
const (
	MaxMessages = 1_000_000
	MaxWorkers  = 64
)

// MaxScenarioMessages bounds the messages of a scenario session (run, the lab): every message
// is seeded, worked and reported one by one, and 100,000 took 134 s and 290 MB on a 2-core
// machine. Stress and seed take up to MaxMessages.
const MaxScenarioMessages = 100_000

// MaxScenarioWork bounds messages × workers in a scenario session: with leasing off (a flag, a
// step or a key away) every worker loads and processes every message, so that is the work a run
// may do; 5,000 × 16 took 28 s and 110 MB here.
const MaxScenarioWork = 200_000

// CheckSize says whether the scenario's size is within what a session runs in bounded time and
// memory: MaxScenarioMessages, and MaxScenarioWork worker-messages.
func (sc *Scenario) CheckSize() error {
	if sc.Messages > MaxScenarioMessages {
		return fmt.Errorf("%d messages: a scenario runs at most %d (leaselab stress takes up to %d)", sc.Messages, MaxScenarioMessages, MaxMessages)
	}
	if w := sc.Messages * len(sc.Workers); w > MaxScenarioWork {
		return fmt.Errorf("%d messages × %d workers = %d worker-messages, more than the %d a scenario may ask for "+
			"(with leasing off every worker processes every message)", sc.Messages, len(sc.Workers), w, MaxScenarioWork)
	}
	return nil
}
