package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// retrySide is what a session's workers share of a message's failures: the plan that makes the
// provider fail, the jitter of the backoff, the chart of provider calls, and the counts.
type retrySide struct {
	plan   *failurePlan
	jitter *jitter
	chart  *callChart

	mu         sync.Mutex
	failures   int            // provider calls that failed
	retries    int            // failed attempts released back to Pending
	parked     int            // failed attempts that dead-lettered their message
	rejected   int            // failed attempts whose release changed no row: the lease was gone
	outage     int            // provider calls made while the provider was down (an outage)
	failedKeys map[string]int // failed attempts per key, for the backoff's attempt number
	// advanced counts the failed attempts that, with dead letters on, released their message
	// with more attempts than it had ever been released with (best, per key): each brings it
	// one attempt nearer to being parked, so the watchdog counts it as progress. There are at
	// most max-attempts of them per message, so the count is bounded.
	advanced int
	best     map[string]int64
}

func newRetrySide(sc *Scenario, start time.Time) *retrySide {
	j := newJitter(sc.Seed)
	return &retrySide{plan: newFailurePlan(sc, j), jitter: j, chart: &callChart{start: start}, failedKeys: map[string]int{}}
}

// call decides a provider call's failure and charts it.
func (r *retrySide) call(key string, now time.Time) ProviderError {
	if !r.plan.active() {
		r.chart.record(now, false)
		return ProviderError{}
	}
	e := r.plan.call(key, now)
	r.chart.record(now, e.Text != "")
	r.mu.Lock()
	if e.Text != "" {
		r.failures++
	}
	if r.plan.inOutage(now) {
		r.outage++
	}
	r.mu.Unlock()
	return e
}

// RetryCounts are what failed attempts did in a run.
type RetryCounts struct {
	ProviderFailures int // provider calls that failed
	Retries          int // failed attempts released to Pending, to be retried
	DeadLettered     int // failed attempts that parked their message
	RejectedFails    int // failed attempts whose guarded release changed no row (a lost lease)
	OutageCalls      int // provider calls made during an outage
}

func (r *retrySide) counts() RetryCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RetryCounts{ProviderFailures: r.failures, Retries: r.retries, DeadLettered: r.parked, RejectedFails: r.rejected,
		OutageCalls: r.outage}
}

// callFailed is check's event for a provider call that failed: the error is the answer, due
// after the provider's latency (a timeout takes its time too).
func (w *Worker) callFailed(key string, now time.Time) Event {
	return Event{Kind: EvCheck, At: now, Key: key, Outcome: OutcomeError, Error: w.perr.Text, Due: w.dueAt}
}

// fail is a failed attempt's end: the worker records the error on the row and releases its
// lease (Conn.Fail, guarded by owner and lease version, the row returned checked), with the
// next attempt the backoff allows, or parks the message once it has had its attempts. A
// release that changes no row is a lost lease, as a rejected finalize is: the worker gives
// the message up. A message held without a lease (leasing off) is dropped from memory: the row
// is still Pending, and the next load takes it again.
func (w *Worker) fail(ctx context.Context, s Settings, now time.Time) (Event, error) {
	key, held, perr := w.held.IdempotencyKey, w.held, w.perr
	w.perr = ProviderError{}
	w.phase, w.held = w.afterMessage(), Message{}
	leased := w.leased
	w.leased = false
	ev := Event{Kind: EvFail, At: now, Key: key, Version: held.LeaseVersion, Error: perr.Text}
	if !leased {
		ev.Outcome = OutcomeLost
		return ev, nil
	}
	r := w.env.retry
	r.mu.Lock()
	r.failedKeys[key]++
	n := r.failedKeys[key]
	r.mu.Unlock()
	req := FailRequest{Worker: w.ID, Message: held, Now: now, Error: perr.Text}
	if d := s.BackoffDelay(n, r.jitter.Float64); d > 0 {
		req.NextAttempt = now.Add(d)
	}
	if s.DeadLetter {
		req.MaxAttempts = int64(max(s.MaxAttempts, 1))
		if perr.Permanent {
			req.MaxAttempts = 1 // a permanent error is parked at once: no attempt can succeed
		}
	}
	res, err := w.conn.Fail(ctx, req)
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", w.Name, err)
	}
	ev.At = res.At
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !res.Released:
		r.rejected++
		ev.Outcome = OutcomeRejected
	case res.DeadLettered:
		r.parked++
		ev.Outcome, ev.Rows = OutcomeParked, res.Attempts
	default:
		r.retries++
		ev.Outcome, ev.Rows, ev.Until = OutcomeReleased, res.Attempts, req.NextAttempt
		if s.DeadLetter && res.Attempts > r.best[key] {
			if r.best == nil {
				r.best = map[string]int64{}
			}
			r.best[key] = res.Attempts
			r.advanced++
		}
	}
	if res.Released {
		w.env.world.Add(1)
	}
	if res.Released && !res.DeadLettered && !w.skewed(s) {
		// The next lease begins after this release (messages.freed); a skewed worker's time is
		// not the scenario's, and is left out.
		w.env.ledger.freed(key, held.LeaseVersion, now)
	}
	return ev, nil
}

// failSentence puts a failed attempt's release in words. Rows carries the attempts.
func failSentence(e Event) string {
	n := e.Worker
	switch e.Outcome {
	case OutcomeLost:
		return fmt.Sprintf("%s gives %s up after the failed call (%s): no lease to release, the row is still Pending", n, e.Key, e.Error)
	case OutcomeRejected:
		return fmt.Sprintf("%s's release of %s after the failed call: 0 rows affected, the lease is no longer its own; nothing changed", n, e.Key)
	case OutcomeParked:
		return fmt.Sprintf("%s DEAD-LETTERED %s after %d %s (%s): never claimed again, until a redrive", n, e.Key, e.Rows, plural(int(e.Rows), "attempt"), e.Error)
	}
	when := "claimable again at once"
	if !e.Until.IsZero() {
		when = fmt.Sprintf("next attempt at %s (backoff %s)", FormatClock(e.Until), e.Until.Sub(e.At).Round(time.Millisecond))
	}
	return fmt.Sprintf("%s released %s after the failed call (%s), attempt %d: Pending, %s", n, e.Key, e.Error, e.Rows, when)
}
