package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNoProgress ends a run that has stopped making progress: its workers keep acting, but no
// message is finalized or parked (a livelock), or it has taken more actions than any run may. A
// command still prints what the run did (the report, the ledgers) and exits 1, as for an unmet
// expectation: the scenario was valid; it did not finish.
var ErrNoProgress = errors.New("the run made no progress")

// Bounds on what one session may do, whatever its script asks. They count actions, never
// wall-clock time: the engine has no wall clock, and a count gives the same answer on every
// machine.
const (
	// stallActions is how many actions of run steps may follow one another without progress
	// (watchdog). A healthy run progresses every few actions (every lesson, each way, stays
	// far below).
	stallActions = 10_000
	// maxSessionActions bounds every action of a session together: a million messages need
	// about four million.
	maxSessionActions = 10_000_000
)

// watchdog is the progress watchdog's memory. Progress is anything that brings a message nearer to
// its end and can happen only boundedly often: a finalize that commits, a message parked as a
// dead letter, and (dead letters on) a failed attempt that released its message with more
// attempts than before (retrySide.advanced). A failed attempt alone is not progress: without
// dead letters a message may fail for ever.
//
// The watchdog reads the crew's ledger, clock and actions, and the scenario's failures (its
// outages, fail-rate and faults) for the cause of a stall.
type watchdog struct {
	crew *Crew
	sc   *Scenario

	mark      int        // the progress count last seen
	since     int        // run actions since it last grew
	base      stallCount // what the run had done when it last grew, for the cause of a stall
	runPauses int        // the pauses the run's own steps drew
	// stalled says, in words, why the script ended without finishing (ErrNoProgress); "" while
	// it has not (end).
	stalled string
}

// stallCount is what a run has done so far, in the figures a stall's cause is read from.
type stallCount struct {
	at                    time.Time // the scenario clock
	commits, parked       int
	attempts, failures    int // provider calls answered (processing attempts), and failed
	lost                  int // finalizes rejected and renewals that found the lease gone
	crashes, pauses       int // the workers' crashes, and the run's own pauses
	claimsEmpty, released int // claims that found nothing; failed attempts released to Pending
	renewals              int // heartbeat renewals that kept a lease
	blocked               int // claims that found the work under live leases
}

// count reads the run's figures now.
func (wd *watchdog) count() stallCount {
	c := stallCount{at: wd.crew.clock.Now(), pauses: wd.runPauses}
	c.commits, _ = wd.crew.ledger.progress()
	wd.crew.ledger.mu.Lock()
	for _, w := range wd.crew.ledger.workers {
		c.attempts += w.ProcessingAttempts
		c.lost += w.RejectedFinalizes + w.LostRenewals
		c.crashes += w.Crashes
		c.claimsEmpty += w.ClaimsEmpty
		c.renewals += w.Renewals
		c.blocked += w.ClaimsBlocked
	}
	wd.crew.ledger.mu.Unlock()
	r := wd.crew.env.retry
	r.mu.Lock()
	c.parked, c.failures, c.released = r.parked, r.failures, r.retries+r.rejected
	r.mu.Unlock()
	return c
}

// progress is the watchdog's count of progress (watchdog).
func (wd *watchdog) progress() int {
	commits, _ := wd.crew.ledger.progress()
	r := wd.crew.env.retry
	r.mu.Lock()
	defer r.mu.Unlock()
	return commits + r.parked + r.advanced
}

// end keeps in words why the script did not finish, where err (ErrNoProgress) stopped it, for
// the summary (Summary.DidNotFinish); Script.endStalled ends the script there.
func (wd *watchdog) end(err error) {
	wd.stalled = err.Error()
	if wd.since >= stallActions {
		wd.stalled = fmt.Sprintf("watchdog after %d actions without progress (%s): %s", wd.since, wd.inAll(), wd.stallCause())
	}
}

// inAll says what the run finished: "300 finalized in all", "12 finalized, 32 dead-lettered in all".
func (wd *watchdog) inAll() string {
	c := wd.count()
	if c.parked > 0 {
		return fmt.Sprintf("%d finalized, %d dead-lettered in all", c.commits, c.parked)
	}
	return fmt.Sprintf("%d finalized in all", c.commits)
}

// watchdog is called after each action of a run step (run, A run): it ends the run when nothing
// has progressed for stallActions actions, or when the session has taken maxSessionActions.
func (wd *watchdog) check() error {
	if p := wd.progress(); p != wd.mark || wd.base.at.IsZero() {
		wd.mark, wd.since, wd.base = p, 0, wd.count()
	} else {
		wd.since++
	}
	switch {
	case wd.since >= stallActions:
		return fmt.Errorf("%w: no message finalized or parked in the last %d actions (%s): %s",
			ErrNoProgress, stallActions, wd.inAll(), wd.stallCause())
	case wd.crew.actions >= maxSessionActions:
		return fmt.Errorf("%w: the session has taken %d actions, the most any run may take", ErrNoProgress, wd.crew.actions)
	}
	return nil
}

// stallCause names, from what the run did since it last progressed, what kept it from
// finishing: the provider failing (an outage, a fail rate, a poison message, and the backoff's
// waits), attempts that outlived their lease, or the run's own crashes and pauses. It is read
// from the counts, never assumed.
func (wd *watchdog) stallCause() string {
	now, b := wd.count(), wd.base
	d := stallCount{
		attempts: now.attempts - b.attempts, failures: now.failures - b.failures, lost: now.lost - b.lost,
		crashes: now.crashes - b.crashes, pauses: now.pauses - b.pauses, claimsEmpty: now.claimsEmpty - b.claimsEmpty,
		released: now.released - b.released, renewals: now.renewals - b.renewals, blocked: now.blocked - b.blocked,
	}
	moved := now.at.Sub(b.at)
	st := wd.crew.settings.get()
	interrupts := d.crashes + d.pauses
	switch {
	case d.failures > 0 && d.failures >= d.attempts: // at least half the calls failed
		src, outage := wd.failingBecause(b.at, now.at)
		why := []string{fmt.Sprintf("the provider failed %d of the %d calls made since", d.failures, d.failures+d.attempts)}
		if src != "" {
			why[0] += " (" + src + ")"
		}
		switch {
		case outage:
			why = append(why, fmt.Sprintf("the outage is still on at %s", FormatClock(now.at)))
		case !st.DeadLetter:
			why = append(why, "with dead-letter off a message that keeps failing is retried for ever")
		}
		switch {
		case moved == 0:
			why = append(why, "the clock did not move: every retry met the same failure")
		case st.Backoff:
			why = append(why, fmt.Sprintf("the backoff's waits moved the clock %s", moved))
		}
		return strings.Join(why, "; ")
	case d.lost > 0 && d.lost >= interrupts:
		return fmt.Sprintf("%d attempts outlived their lease since (their finalize or renewal found the lease gone): "+
			"a lease of %s is shorter than the work", d.lost, st.Lease)
	case d.renewals > 0 && d.renewals >= interrupts:
		return fmt.Sprintf("the workers renewed their leases %d times since and finished nothing: the work outlasts the run (the clock moved %s)",
			d.renewals, moved)
	case interrupts > 0:
		return fmt.Sprintf("the workers were crashed %d times and paused %d times since, more often than a message can be finished",
			d.crashes, d.pauses)
	}
	if d.blocked > 0 && d.attempts == 0 {
		why := fmt.Sprintf("every claim since found the work under a live lease (%d claims blocked), and the clock moved %s without one ending", d.blocked, moved)
		var ahead []string
		for _, w := range wd.crew.workers {
			if w.spec.Skew > 0 {
				ahead = append(ahead, fmt.Sprintf("%s's clock runs %s ahead, and so do the ends of its leases", w.Name, w.spec.Skew))
			}
		}
		if len(ahead) > 0 {
			why += ": " + strings.Join(ahead, "; ")
		}
		return why
	}
	return fmt.Sprintf("since then: %d processing attempts, %d claims blocked by a live lease, %d claims found nothing, the clock moved %s",
		d.attempts, d.blocked, d.claimsEmpty, moved)
}

// failingBecause names the scenario's provider faults that were at work between from and to:
// the outages that overlap it, the fail rate, the messages that always fail. on: an outage is
// still on at to.
func (wd *watchdog) failingBecause(from, to time.Time) (names string, on bool) {
	var src []string
	for _, o := range wd.sc.Outages {
		if !o.From.After(to) && o.From.Add(o.For).After(from) {
			src = append(src, fmt.Sprintf("an outage from %s for %s", FormatClock(o.From), o.For))
			on = on || o.From.Add(o.For).After(to)
		}
	}
	if r := wd.sc.FailRate; r > 0 {
		src = append(src, fmt.Sprintf("fail-rate %g", r))
	}
	for _, f := range wd.sc.Faults {
		switch {
		case f.Permanent:
			src = append(src, "provider-error "+f.Key+" permanent")
		case f.Times == 0:
			src = append(src, "provider-error "+f.Key+" always")
		}
	}
	return strings.Join(src, ", "), on
}
