package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Action is one step a worker can take: one transaction or one provider call.
type Action int

// Actions.
const (
	ActNone     Action = iota // nothing to do now (idle and quiet, waiting on the clock, crashed, paused)
	ActLoad                   // naive: SELECT every Pending row
	ActClaim                  // atomic claim transaction
	ActSelect                 // non-atomic claim, part 1: plain read of a candidate
	ActTake                   // non-atomic claim, part 2: unconditional UPDATE
	ActCheck                  // provider call: CheckPaymentStatus
	ActRenew                  // heartbeat: extend the lease
	ActFinalize               // payment + outbox in one transaction
	ActLock                   // two-step atomic claim, part 1: lock the row, transaction left open (PostgreSQL)
)

var actionNames = [...]string{"none", "load", "claim", "select", "take", "check", "renew", "finalize", "lock"}

func (a Action) String() string { return actionNames[a] }

// ParseAction reads an action name as scripts write it.
func ParseAction(s string) (Action, bool) {
	for i, n := range actionNames {
		if n == s && i != int(ActNone) {
			return Action(i), true
		}
	}
	return ActNone, false
}

// phase is where a worker is in its loop.
type phase int

const (
	phaseIdle     phase = iota // holds nothing
	phaseLoaded                // holds loaded rows (naive), none in progress
	phaseSelected              // holds a candidate it read but has not taken
	phaseClaimed               // holds a leased message, not yet checked
	phaseAwaiting              // called the provider; the answer is due at dueAt
	phaseLocked                // holds a row lock in its open claim transaction (ActLock); the claim's UPDATE is next
)

// env is what the workers of one session share.
type env struct {
	clock    *Clock
	provider *Provider
	ledger   *Ledger
	settings func() Settings
	// world counts changes that can make an empty or blocked poll worth repeating: commits,
	// clock moves, restarts, setting changes.
	world atomic.Uint64
	// trace: record each action's SQL on its event (Session.TraceSQL).
	trace atomic.Bool
	// moments: the outbox tables a transcript shows (Session.RecordMoments), or nil.
	moments *moments
	// retry: the provider's failures, the backoff's jitter and what they did (worker_fail.go).
	retry *retrySide
	// clocks: what skewed clocks and provider fencing did (skew.go).
	clocks clocks
	// caps: what the session's database can do (DB.Capabilities), read once when it opens.
	caps Capabilities
}

// Worker is one outbox worker: a state machine over its own connection. Every call to Do performs
// exactly one action. A worker's methods are safe to call from several goroutines; an action and
// a crash never interleave.
type Worker struct {
	Name  string // display name and, unless ID differs, LockedBy: "Worker-A"
	ID    string // the value written to LockedBy
	Short string // the scenario's short name: "A"

	env  *env
	db   DB
	spec WorkerSpec

	mu        sync.Mutex
	conn      Conn
	crashed   bool
	paused    bool
	phase     phase
	queue     []Message // loaded rows not yet processed (naive path)
	held      Message   // the message in progress
	leased    bool      // held came from a claim or take
	result    ProviderResult
	perr      ProviderError // the provider call failed: no answer, the attempt is released
	dueAt     time.Time     // provider answer due
	renewAt   time.Time     // next heartbeat
	quiet     bool          // last poll found nothing…
	quietAt   uint64        // …at this world version
	blockedTo time.Time     // the lease that blocked the last poll ends at this time
	lastText  string
}

// WorkerView is a copy of what a worker holds in memory, for screens and reports.
type WorkerView struct {
	Name, ID, Short string
	Crashed, Paused bool
	State           string // idle, loaded 6, claimed PAY-001, processing PAY-003, …
	Holding         string // the key in progress, "" when none
	HoldingVersion  int64
	Queue           int // loaded rows not yet processed
	Next            Action
	Quiet           bool
	Last            string
}

func (w *Worker) connect(ctx context.Context) error {
	c, err := w.db.Connect(ctx)
	if err != nil {
		return fmt.Errorf("%s: connect: %w", w.Name, err)
	}
	w.conn = c
	return nil
}

// View copies the worker's memory.
func (w *Worker) View() WorkerView {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.env.settings()
	now := w.env.clock.Now()
	v := WorkerView{Name: w.Name, ID: w.ID, Short: w.Short, Crashed: w.crashed, Paused: w.paused,
		Queue: len(w.queue), Next: w.nextLocked(s, now), Quiet: w.isQuietLocked(), Last: w.lastText}
	if w.phase == phaseSelected || w.phase == phaseClaimed || w.phase == phaseAwaiting || w.phase == phaseLocked {
		v.Holding, v.HoldingVersion = w.held.IdempotencyKey, w.held.LeaseVersion
	}
	switch {
	case w.crashed:
		v.State = "CRASHED"
	case w.phase == phaseIdle && w.quiet && w.isQuietLocked() && !w.blockedTo.IsZero():
		v.State = "blocked"
	case w.phase == phaseIdle && w.quiet && w.isQuietLocked():
		v.State = "idle (nothing to do)"
	case w.phase == phaseIdle:
		v.State = "idle"
	case w.phase == phaseLoaded:
		v.State = fmt.Sprintf("loaded %d", len(w.queue))
	case w.phase == phaseSelected:
		v.State = "selected " + w.held.IdempotencyKey
	case w.phase == phaseLocked:
		v.State = "locked " + w.held.IdempotencyKey + ", tx open"
	case w.phase == phaseClaimed:
		v.State = "claimed " + w.held.IdempotencyKey
	case w.phase == phaseAwaiting && now.Before(w.dueAt):
		v.State = "processing " + w.held.IdempotencyKey
	case w.phase == phaseAwaiting:
		v.State = "finalizing " + w.held.IdempotencyKey
	}
	if w.paused && !w.crashed {
		v.State = "PAUSED, " + v.State
	}
	return v
}

// Holds reports whether the worker is in the middle of a message: it has loaded, selected,
// locked or claimed one and not finished it (and has not crashed).
func (w *Worker) Holds() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.crashed && w.phase != phaseIdle
}

// Next is the action the worker would take now.
func (w *Worker) Next() Action {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nextLocked(w.env.settings(), w.env.clock.Now())
}

// nextLocked is the worker's decision table: what it does next, given its memory, the settings
// and the time.
func (w *Worker) nextLocked(s Settings, now time.Time) Action {
	if w.crashed || w.paused {
		return ActNone
	}
	switch w.phase {
	case phaseIdle:
		switch {
		case !s.Leasing:
			return ActLoad
		case s.AtomicClaim:
			return ActClaim
		default:
			return ActSelect
		}
	case phaseLoaded, phaseClaimed:
		return ActCheck
	case phaseSelected:
		return ActTake
	case phaseLocked:
		return ActClaim // the claim's UPDATE and COMMIT
	case phaseAwaiting:
		if !now.Before(w.dueAt) {
			return ActFinalize
		}
		if s.Heartbeat && w.leased && !now.Before(w.renewAt) {
			return ActRenew
		}
	}
	return ActNone
}

// isQuietLocked: the last poll found nothing and nothing has changed since.
func (w *Worker) isQuietLocked() bool {
	return w.phase == phaseIdle && w.quiet && w.quietAt == w.env.world.Load()
}

// Runnable reports whether the worker has an action that could make progress now: it is live,
// and it is not idle after a poll that found nothing with nothing changed since.
func (w *Worker) Runnable() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nextLocked(w.env.settings(), w.env.clock.Now()) != ActNone && !w.isQuietLocked()
}

// Timer is the scenario time at which this worker will next have something to do without
// anyone else acting: its provider answer, its heartbeat, or the end of the lease that blocked
// it. Zero when there is none.
func (w *Worker) Timer() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.crashed || w.paused {
		return time.Time{}
	}
	s := w.env.settings()
	switch {
	case w.phase == phaseAwaiting && s.Heartbeat && w.leased && w.renewAt.Before(w.dueAt):
		return w.renewAt
	case w.phase == phaseAwaiting:
		return w.dueAt
	case w.phase == phaseIdle && w.quiet && !w.blockedTo.IsZero():
		return w.blockedTo.Add(time.Millisecond)
	}
	return time.Time{}
}

// Step performs the worker's next action. acted is false when it had nothing to do.
func (w *Worker) Step(ctx context.Context) (ev Event, acted bool, err error) {
	return w.Do(ctx, ActNone, "")
}

// outcomeBusy marks the empty event Do returns when SQLite stayed busy past busy_timeout: nothing
// happened and the action may be retried.
const outcomeBusy = "busy"

// ErrNotNow is returned when a script asks a worker for an action its state does not allow.
var ErrNotNow = errors.New("action not possible now")

// Do performs one action. With act ActNone the worker does what it would do next; otherwise act
// must be its next action. An idle worker's poll (claim, load or select) is whichever the
// settings make it: a script's "claim" is a bulk load with leasing off and a select with the
// atomic claim off, so that flipping a toggle changes what the script does. key names the
// message for an atomic claim ("" for the oldest claimable one); the other polls ignore it.
func (w *Worker) Do(ctx context.Context, act Action, key string) (Event, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.env.settings()
	now := w.env.clock.Now()
	next := w.nextLocked(s, now)
	switch {
	case w.conn == nil && !w.crashed:
		return Event{}, false, fmt.Errorf("%s: its session is closed: %w", w.Name, ErrNotNow)
	case w.crashed:
		if act != ActNone {
			return Event{}, false, fmt.Errorf("%s is crashed: %w", w.Name, ErrNotNow)
		}
		return Event{}, false, nil
	case act == ActNone:
		act = next
		if act == ActNone {
			return Event{}, false, nil
		}
	case w.paused:
		return Event{}, false, fmt.Errorf("%s is paused: %w", w.Name, ErrNotNow)
	case act == ActLock:
		if err := w.canLockLocked(next); err != nil {
			return Event{}, false, err
		}
		key = ""
	case w.phase == phaseIdle && (act == ActClaim || act == ActLoad || act == ActSelect):
		if act = next; act != ActClaim {
			key = ""
		}
	case act != next:
		return Event{}, false, fmt.Errorf("%s cannot %s now (its next action is %s): %w", w.Name, act, next, ErrNotNow)
	}
	tr := w.traceStart()
	ev, err := w.doLocked(ctx, act, key, s, now, w.localNow(s, now))
	ev.Trace = w.traceStop(tr)
	if errors.Is(err, ErrBusy) {
		w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.BusyRetries++ })
		return Event{Outcome: outcomeBusy}, false, nil
	}
	if err != nil {
		return Event{}, false, err
	}
	if ev.At.IsZero() || w.skewed(s) { // a transaction sets the time it took effect (engine: "Time in a request"); a skewed worker's is its own clock's, and the timeline keeps the scenario's
		ev.At = now
	}
	w.env.clocks.observeClaim(ev, now)
	ev.Worker, ev.ID = w.Name, w.ID
	ev.Text = Sentence(ev)
	w.lastText = ev.Text
	return w.env.ledger.record(ev), true, nil
}

// doLocked performs act: now is the scenario's time, local the time the worker writes into a
// lease (its own clock's, skew.go).
func (w *Worker) doLocked(ctx context.Context, act Action, key string, s Settings, now, local time.Time) (Event, error) {
	switch act {
	case ActLoad:
		return w.load(ctx)
	case ActClaim:
		if w.phase == phaseLocked {
			return w.finishClaim(ctx, s, local)
		}
		return w.claim(ctx, key, s, local)
	case ActLock:
		return w.lockClaim(ctx, s, local)
	case ActSelect:
		return w.selectCandidate(ctx, local)
	case ActTake:
		return w.take(ctx, s, local)
	case ActCheck:
		return w.check(s, now), nil
	case ActRenew:
		return w.renew(ctx, s, local)
	case ActFinalize:
		return w.finalize(ctx, s, local)
	}
	return Event{}, fmt.Errorf("%s: unknown action %d", w.Name, act)
}

// wall is the wall clock a request hands the store, to be read inside the transaction once the
// lock is held; nil on a scenario clock, whose times are fixed (see "Time in a request").
func (w *Worker) wall() func() time.Time { return w.env.clock.wall }

// poll marks the end of a poll: found says whether it found work.
func (w *Worker) poll(found bool, blockedTo time.Time) {
	w.quiet, w.quietAt, w.blockedTo = !found, w.env.world.Load(), blockedTo
	if found {
		w.blockedTo = time.Time{}
	}
}

func (w *Worker) load(ctx context.Context) (Event, error) {
	msgs, err := w.conn.LoadPending(ctx)
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", w.Name, err)
	}
	w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.Loads++; l.RowsLoaded += len(msgs) })
	w.poll(len(msgs) > 0, time.Time{})
	ev := Event{Kind: EvLoad, Rows: int64(len(msgs))}
	if len(msgs) == 0 {
		ev.Outcome = OutcomeEmpty
		return ev, nil
	}
	w.queue, w.phase = msgs, phaseLoaded
	ev.Outcome, ev.Key, ev.Last = OutcomeLoaded, msgs[0].IdempotencyKey, msgs[len(msgs)-1].IdempotencyKey
	return ev, nil
}

// claimRequest is the claim the settings make, now.
func (w *Worker) claimRequest(key string, s Settings, now time.Time) ClaimRequest {
	return ClaimRequest{Worker: w.ID, Now: now, Until: now.Add(s.Lease), Key: key,
		Clock: w.wall(), Lease: s.Lease, WaitForLocks: !s.SkipLocked, LockTimeout: s.LockTimeout}
}

func (w *Worker) claim(ctx context.Context, key string, s Settings, now time.Time) (Event, error) {
	claim := w.conn.Claim
	if s.Backoff && key == "" {
		claim = w.conn.ClaimDue // a message in its backoff is not claimable yet
	}
	res, err := claim(ctx, inclusiveExpiry(w.claimRequest(key, s, now), s)) // boundary.go
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", w.Name, err)
	}
	res.At = claimedAt(res.At, s)
	return w.claimed(res, key), nil
}

// claimed records a claim's result (a one-step claim, or the end of a two-step one).
func (w *Worker) claimed(res ClaimResult, key string) Event {
	ev := Event{Kind: EvClaim, Outcome: res.Outcome.String(), At: res.At, Wait: res.LockWait, Holder: res.LockHolder, WaitedFor: res.WaitedFor}
	if res.LockWait > 0 {
		w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.LockWaits++; l.LockWaited += res.LockWait })
	}
	switch res.Outcome {
	case ClaimWon:
		w.env.world.Add(1)
		w.poll(true, time.Time{})
		w.held, w.leased, w.phase = res.Message, true, phaseClaimed
		reclaim := res.PrevOwner != "" && !res.PrevUntil.IsZero() // a failed attempt's release leaves LockedBy, not a lease
		w.env.ledger.update(w.Name, func(l *WorkerLedger) {
			l.ClaimsWon++
			if reclaim {
				l.Reclaims++
			}
		})
		ev.Key, ev.Rows, ev.Until, ev.Version = res.Message.IdempotencyKey, 1, res.Message.LockedUntil, res.Message.LeaseVersion
		if reclaim {
			ev.Outcome, ev.PriorOwner, ev.PriorUntil = OutcomeReclaimed, res.PrevOwner, res.PrevUntil
		}
	case ClaimEmpty:
		w.poll(false, time.Time{})
		w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.ClaimsEmpty++ })
		ev.Key = key
	case ClaimLost:
		// Counted with the claims that took nothing: no lease held it back, another claim
		// was quicker.
		w.poll(false, time.Time{})
		w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.ClaimsEmpty++ })
		ev.Key, ev.PriorOwner = res.Blocker, res.PrevOwner
	case ClaimBlocked:
		w.poll(false, res.PrevUntil)
		ev.Key, ev.Until, ev.PriorOwner = res.Blocker, res.PrevUntil, res.PrevOwner
		if res.waitsForBackoff() {
			// Nobody holds the row: it waits for its NextAttemptUtc, which is not a lease.
			ev.Outcome = OutcomeBackoff
			w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.ClaimsBackoff++ })
			break
		}
		w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.ClaimsBlocked++ })
	}
	return ev
}

func (w *Worker) selectCandidate(ctx context.Context, now time.Time) (Event, error) {
	m, ok, err := w.conn.SelectCandidate(ctx, now)
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", w.Name, err)
	}
	w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.Selects++ })
	w.poll(ok, time.Time{})
	if !ok {
		return Event{Kind: EvSelect, Outcome: OutcomeEmpty}, nil
	}
	w.held, w.leased, w.phase = m, false, phaseSelected
	return Event{Kind: EvSelect, Key: m.IdempotencyKey, Outcome: OutcomeSelected}, nil
}

// leaseTimes are the times of a take or renewal the worker makes at now: a lease of s.Lease.
func (w *Worker) leaseTimes(s Settings, now time.Time) LeaseTimes {
	return LeaseTimes{Now: now, Until: now.Add(s.Lease), Clock: w.wall(), Lease: s.Lease}
}

func (w *Worker) take(ctx context.Context, s Settings, now time.Time) (Event, error) {
	res, err := w.conn.TakeUnconditional(ctx, TakeRequest{ID: w.held.ID, Worker: w.ID, LeaseTimes: w.leaseTimes(s, now),
		WaitForLocks: !s.SkipLocked, LockTimeout: s.LockTimeout})
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", w.Name, err)
	}
	if res.Blocked {
		return w.takeBlocked(res, now), nil
	}
	m := res.Message
	w.env.world.Add(1)
	w.held, w.leased, w.phase = m, true, phaseClaimed
	w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.Takes++; l.ClaimsWon++ })
	return Event{Kind: EvTake, At: res.At, Key: m.IdempotencyKey, Outcome: OutcomeTaken, Rows: 1, Until: m.LockedUntil, Version: m.LeaseVersion}, nil
}

// check is the processing attempt: one call to the provider. Its answer is due after the
// provider's latency, in scenario time.
func (w *Worker) check(s Settings, now time.Time) Event {
	if w.phase == phaseLoaded {
		w.held, w.queue, w.leased = w.queue[0], w.queue[1:], false
	}
	key := w.held.IdempotencyKey
	if w.leased && w.env.clock.Follows() && now.After(w.held.LockedUntil) {
		return w.expiredBeforeCall(now)
	}
	if s.ProviderFencing && w.leased && w.env.clocks.stale(key, w.held.LeaseVersion) {
		return w.fencedCall(now)
	}
	w.result = w.env.provider.CheckPaymentStatus(key)
	latency := s.ProviderLatency
	if w.spec.Slow {
		latency = w.spec.Latency
	}
	w.dueAt, w.renewAt, w.phase = now.Add(latency), now.Add(s.HeartbeatEvery), phaseAwaiting
	if w.perr = w.env.retry.call(key, now); w.perr.Text != "" {
		return w.callFailed(key, now)
	}
	w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.ProcessingAttempts++ })
	w.env.ledger.attempt(key, Attempt{Worker: w.Name, At: now, Version: w.held.LeaseVersion})
	return Event{Kind: EvCheck, At: now, Key: key, Outcome: w.result.Status, TxID: w.result.TransactionID, Due: w.dueAt}
}

// expiredBeforeCall is a wall-clock worker's check when its lease ended before the provider
// call (its claim waited, or it was slow to get here): calling now would process a message
// another worker may already own. It gives the message up without calling, and claims again.
// Scripted runs never take this path: on the scenario clock a stale owner that calls anyway is
// what lease-too-short and stale-owner teach.
func (w *Worker) expiredBeforeCall(now time.Time) Event {
	key, until := w.held.IdempotencyKey, w.held.LockedUntil
	w.phase, w.held, w.leased = w.afterMessage(), Message{}, false
	w.env.world.Add(1)
	return Event{Kind: EvCheck, At: now, Key: key, Outcome: OutcomeExpired, Until: until}
}

// takeBlocked is a take that met another transaction's row lock (PostgreSQL: an open claim's
// locking read) and gave up, at once or after the lock timeout: it took nothing, and the worker
// gives the candidate up and polls again once something has changed (the lock's holder
// commits). It is counted as a blocked claim, and its wait as a lock wait. A take that waited
// for ever instead would never end a script whose next step is the lock holder's.
func (w *Worker) takeBlocked(res TakeResult, now time.Time) Event {
	key := w.held.IdempotencyKey
	w.phase, w.held, w.leased = w.afterMessage(), Message{}, false
	w.poll(false, time.Time{})
	w.env.ledger.update(w.Name, func(l *WorkerLedger) {
		l.ClaimsBlocked++
		if res.LockWait > 0 {
			l.LockWaits++
			l.LockWaited += res.LockWait
		}
	})
	return Event{Kind: EvTake, At: now, Key: key, Outcome: OutcomeBlocked, Wait: res.LockWait, WaitedFor: key}
}

func (w *Worker) renew(ctx context.Context, s Settings, now time.Time) (Event, error) {
	res, err := w.conn.Renew(ctx, RenewRequest{Worker: w.ID, Message: w.held, LeaseTimes: w.leaseTimes(s, now)})
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", w.Name, err)
	}
	key, until := w.held.IdempotencyKey, res.Until
	if !res.Renewed {
		// The lease is gone: someone reclaimed the message. Give it up rather than finish.
		w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.LostRenewals++ })
		w.phase, w.held, w.leased = w.afterMessage(), Message{}, false
		return Event{Kind: EvRenew, At: res.At, Key: key, Outcome: OutcomeLost}, nil
	}
	w.env.world.Add(1)
	w.held.LockedUntil, w.renewAt = until, res.At.Add(s.HeartbeatEvery)
	w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.Renewals++ })
	return Event{Kind: EvRenew, At: res.At, Key: key, Outcome: OutcomeRenewed, Rows: 1, Until: until}, nil
}

func (w *Worker) finalize(ctx context.Context, s Settings, now time.Time) (Event, error) {
	if w.perr.Text != "" {
		return w.fail(ctx, s, now)
	}
	req := FinalizeRequest{
		Worker: w.ID, Message: w.held, Now: now, Clock: w.wall(),
		PaymentStatus: w.result.Status, TransactionID: w.result.TransactionID,
		OwnershipCheck: s.OwnershipCheck && w.leased,
		Fencing:        s.Fencing && w.leased,
	}
	res, err := w.conn.Finalize(ctx, req)
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", w.Name, err)
	}
	key, held := w.held.IdempotencyKey, w.held
	w.phase, w.held, w.leased = w.afterMessage(), Message{}, false
	ev := Event{Kind: EvFinalize, At: res.At, Key: key, Rows: res.RowsAffected, Version: held.LeaseVersion,
		OwnerCheck: req.OwnershipCheck, Fenced: req.Fencing, Payment: w.result.Status,
		PriorStatus: res.PriorStatus, PriorOwner: res.PriorOwner, PriorVersion: res.PriorVersion}
	if !res.Committed {
		w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.RejectedFinalizes++ })
		ev.Outcome = OutcomeRejected
		return ev, nil
	}
	w.env.world.Add(1)
	w.env.ledger.commit(key)
	violation := held.LeaseVersion > 0 && (res.PriorStatus != StatusProcessing || res.PriorOwner != w.ID || res.PriorVersion != held.LeaseVersion)
	w.env.ledger.update(w.Name, func(l *WorkerLedger) {
		l.Finalized++
		if violation {
			l.OwnershipViolations++
		}
	})
	ev.Outcome = OutcomeCommitted
	if violation {
		ev.Outcome = OutcomeViolation
	}
	return ev, nil
}

// afterMessage is the phase once the message in progress is done with.
func (w *Worker) afterMessage() phase {
	if len(w.queue) > 0 {
		return phaseLoaded
	}
	return phaseIdle
}

// crash loses the worker's memory and closes its connection; its rows stay as they are.
func (w *Worker) crash() (Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.crashed {
		return Event{}, fmt.Errorf("%s is already crashed: %w", w.Name, ErrNotNow)
	}
	if w.conn == nil {
		return Event{}, fmt.Errorf("%s: its session is closed: %w", w.Name, ErrNotNow)
	}
	ev := Event{Kind: EvCrash, Worker: w.Name, ID: w.ID}
	switch {
	case w.leased:
		ev.Key, ev.Outcome, ev.Until, ev.Version = w.held.IdempotencyKey, OutcomeHolding, w.held.LockedUntil, w.held.LeaseVersion
	case len(w.queue) > 0 || w.phase == phaseAwaiting:
		ev.Outcome = OutcomeUnfinished
	}
	if w.phase == phaseLocked {
		ev.Key, ev.Outcome = w.held.IdempotencyKey, OutcomeLockReleased
	}
	err := w.conn.Close()
	w.conn, w.crashed, w.paused = nil, true, false
	w.phase, w.queue, w.held, w.leased, w.quiet = phaseIdle, nil, Message{}, false, false
	w.perr = ProviderError{}
	w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.Crashes++ })
	ev.Text = Sentence(ev)
	w.lastText = ev.Text
	return ev, err
}

// restart gives a crashed worker a new connection and empty memory.
func (w *Worker) restart(ctx context.Context) (Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.crashed {
		return Event{}, fmt.Errorf("%s is not crashed: %w", w.Name, ErrNotNow)
	}
	if err := w.connect(ctx); err != nil {
		return Event{}, err
	}
	w.crashed = false
	w.env.world.Add(1)
	w.env.ledger.update(w.Name, func(l *WorkerLedger) { l.Restarts++ })
	ev := Event{Kind: EvRestart, Worker: w.Name, ID: w.ID}
	ev.Text = Sentence(ev)
	w.lastText = ev.Text
	return ev, nil
}

// setPaused pauses or wakes the worker. A paused worker keeps its memory and still believes it
// owns what it holds; it takes no action, and renews nothing, until woken.
func (w *Worker) setPaused(p bool) (Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.crashed {
		return Event{}, fmt.Errorf("%s is crashed: %w", w.Name, ErrNotNow)
	}
	if w.paused == p {
		return Event{}, fmt.Errorf("%s is already %s: %w", w.Name, map[bool]string{true: "paused", false: "running"}[p], ErrNotNow)
	}
	w.paused = p
	ev := Event{Kind: EvPause, Worker: w.Name, ID: w.ID}
	if !p {
		w.env.world.Add(1)
		ev.Kind = EvResume
	}
	if w.leased {
		ev.Holding, ev.Version, ev.Until = w.held.IdempotencyKey, w.held.LeaseVersion, w.held.LockedUntil
	}
	ev.Text = Sentence(ev)
	w.lastText = ev.Text
	return ev, nil
}

// close closes the connection of a live worker at the end of a session.
func (w *Worker) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn == nil {
		return nil
	}
	err := w.conn.Close()
	w.conn = nil
	return err
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func orNone(s string) string {
	if s == "" {
		return "NULL"
	}
	return s
}

// WorkerName turns a short name into a display name: "A" → "Worker-A".
func WorkerName(short string) string {
	if strings.HasPrefix(short, "Worker-") {
		return short
	}
	return "Worker-" + short
}
