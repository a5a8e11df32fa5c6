package cli

import (
	"fmt"
	"testing"
)

// The watchdog ends a run that makes no progress, and only such a run; when it does, it names
// the cause the run had, read from what it did (engine/watchdog.go).
func TestHostileWatchdog(t *testing.T) {
	finished := func(seed int) string {
		// 64 workers: after the last finalize, the crashed and paused came back, found nothing,
		// and crashes and pauses drawn after that went round until the watchdog ended a finished
		// run (with the old code each of these seeds did: "EVERY CHECK HOLDS" beside "DID NOT FINISH").
		return fmt.Sprintf("name: done\nmessages: 60\nworkers: 64\nlease: 500ms\nseed: %d\nsteps:\n  run random until-done crash-rate=0.03 pause-rate=0.03\n", seed)
	}
	var cases []hostileCase
	for _, seed := range []int{0, 11} {
		cases = append(cases, hostileCase{name: fmt.Sprintf("a finished run: 60 messages, 64 workers, crash-rate=0.03 pause-rate=0.03, seed %d", seed),
			setup: inputFile("done.scenario", finished(seed)), code: exitOK, msg: "EVERY CHECK HOLDS", unchanged: true})
	}
	cases = append(cases,
		// Each message fails 100 times before it is parked: about 300 actions each, and no
		// finalize ever. The old watchdog counted finalizes only and ended it after 32 parked.
		hostileCase{name: "parking is progress: fail-rate 1, dead-letter on, max-attempts 100, 36 messages",
			setup: inputFile("park.scenario", "name: park\nmessages: 36\nworkers: 2\nfail-rate: 1\ndead-letter: on\nmax-attempts: 100\nsteps:\n  run until-done\n"),
			code:  exitOK, msg: "36 dead-lettered (parked, not lost)", unchanged: true},
		// The causes, named from what the run did (each was "a lease shorter than the work").
		hostileCase{name: "a run stalled in a 2h outage, with backoff",
			setup: inputFile("out.scenario", "name: out\nmessages: 10\nworkers: 2\noutage: 09:00:00.000Z 2h\nbackoff: on\nbackoff-policy: exponential\nbackoff-base: 1s\nbackoff-cap: 1h\nsteps:\n  run until-done\n"),
			code:  exitExpect, msg: "the provider failed 108 of the 108 calls made since (an outage from 09:00:00.000Z for 2h0m0s); the outage is still on at 09:10:06.893Z; the backoff's waits moved the clock 10m6.893s", unchanged: true},
		hostileCase{name: "a run stalled in a long backoff: fail-rate 1, backoff up to 1h, no dead letters",
			setup: inputFile("bo.scenario", "name: bo\nmessages: 3\nworkers: 2\nfail-rate: 1\nbackoff: on\nbackoff-policy: fixed\nbackoff-base: 1h\nsteps:\n  run until-done\n"),
			code:  exitExpect, msg: "(fail-rate 1); with dead-letter off a message that keeps failing is retried for ever; the backoff's waits moved the clock", unchanged: true},
		hostileCase{name: "a lease shorter than the work: 3 workers of 800ms, lease 500ms, 1 message",
			setup: inputFile("ls.scenario", "name: ls\nmessages: 1\nworkers: A B C\nlease: 500ms\nslow: A 800ms\nslow: B 800ms\nslow: C 800ms\nsteps:\n  run until-done\n"),
			code:  exitExpect, msg: "attempts outlived their lease since (their finalize or renewal found the lease gone): a lease of 500ms is shorter than the work", unchanged: true},
	)
	runHostile(t, "watchdog", cases)
}
