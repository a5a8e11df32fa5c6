package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ServeOptions shape a worker that runs on its own, as a worker process or a free-running lab
// worker does.
type ServeOptions struct {
	// Pace is a pause after every action (0: full speed).
	Pace time.Duration
	// Poll is how long to wait before polling again when there is nothing to do.
	Poll time.Duration
	// UntilEmpty ends the loop once a claim or load finds no work left at all (not merely
	// blocked by a live lease).
	UntilEmpty bool
	// OnEvent, when set, is called with every event the worker records.
	OnEvent func(Event)
	// Admit, when set, is asked before every action: it returns when the worker may act (a
	// server shares its time between labs this way), or an error when the worker must stop
	// waiting (the loop then ends as at a stop).
	Admit func(ctx context.Context) error
	// Finish, when positive, is how long a worker in the middle of a message when ctx ends
	// (a signal, a closed output) goes on with it, on a context of its own: its provider call
	// and its finalize, so that the row is not left Processing under a lease nobody will
	// finish. It never claims again. A stop through the stop channel does not finish.
	Finish time.Duration
	// Wall is the real time the worker waits on (its pace and its polls); nil: SystemWall.
	Wall Wall
}

// Serve runs w continuously: one action after another, polling when there is nothing to do,
// until stop is closed, ctx ends, or (UntilEmpty) no work is left. Actions run with ctx, so a
// stop never cuts a transaction in half: the loop checks stop only between actions.
func (w *Worker) Serve(ctx context.Context, stop <-chan struct{}, opt ServeOptions) error {
	if opt.Poll <= 0 {
		opt.Poll = 5 * time.Millisecond
	}
	if opt.Wall == nil {
		opt.Wall = SystemWall{}
	}
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return w.finish(opt)
		default:
		}
		var (
			ev    Event
			acted bool
			err   error
		)
		// A worker whose last poll found nothing polls again only when something changed in
		// this process; on a wall clock (worker processes sharing a file) other processes change
		// things unseen, so it polls again every Poll.
		if w.Runnable() || (w.env.clock.Follows() && w.Next() != ActNone) {
			if opt.Admit != nil {
				if opt.Admit(ctx) != nil {
					return nil
				}
				select {
				case <-stop:
					return nil
				default:
				}
			}
			ev, acted, err = w.Step(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return w.finish(opt)
			}
			if errors.Is(err, ErrNotNow) {
				return nil
			}
			return err
		}
		if acted && opt.OnEvent != nil {
			opt.OnEvent(ev)
		}
		if acted && opt.UntilEmpty && ev.Outcome == OutcomeEmpty && (ev.Kind == EvClaim || ev.Kind == EvLoad) && ev.Key == "" {
			return nil
		}
		wait := opt.Pace
		if !acted || ev.Outcome == OutcomeBlocked || ev.Outcome == OutcomeEmpty {
			wait = max(opt.Poll, opt.Pace) // nothing to do: poll again later, not in a busy loop
		}
		if wait > 0 {
			select {
			case <-stop:
				return nil
			case <-ctx.Done():
				return w.finish(opt)
			case <-opt.Wall.After(wait):
			}
		}
	}
}

// finish carries on with the message w holds, if any, for up to opt.Finish: every action up to
// its finalize, waiting opt.Poll between polls, and nothing after.
func (w *Worker) finish(opt ServeOptions) error {
	if opt.Finish <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), opt.Finish)
	defer cancel()
	for w.Holds() {
		if w.Next() != ActNone {
			ev, acted, err := w.Step(ctx)
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, ErrNotNow) {
					return nil
				}
				return err
			}
			if acted && opt.OnEvent != nil {
				opt.OnEvent(ev)
			}
			continue
		}
		if sleep(ctx, opt.Wall, opt.Poll); ctx.Err() != nil {
			return nil
		}
	}
	return nil
}

// FreeRun is every worker of a session running on its own goroutine and connection, truly
// concurrently, while the session can still crash, pause, restart workers and move the clock.
type FreeRun struct {
	stop       chan struct{}
	stopAdmits context.CancelFunc // ends the waits for admission at a stop
	wg         sync.WaitGroup
	mu         sync.Mutex
	errs       []error
}

// StartFree starts every worker (crashed ones idle until restarted) at the given pace. admit,
// when set, is asked before every action (ServeOptions.Admit); a stop ends its waits.
func (s *Session) StartFree(ctx context.Context, pace time.Duration, admit func(context.Context) error) *FreeRun {
	f := &FreeRun{stop: make(chan struct{})}
	s.off.left("a free run")
	// The free run replaces what is left of the script: its steps, and their questions, are
	// about a run that now goes another way. From here the script is one "run until-done" step
	// (on this session's copy of the scenario), which space and e carry on once the workers are
	// stopped; the run is done once nothing is left to happen (Done).
	s.Scenario = s.script.goFree()
	opt := ServeOptions{Pace: pace}
	if admit != nil {
		actx, cancel := context.WithCancel(ctx)
		f.stopAdmits = cancel
		opt.Admit = func(context.Context) error { return admit(actx) }
	}
	for _, w := range s.crew.workers {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			if err := recovered(w.Name, func() error { return w.Serve(ctx, f.stop, opt) }); err != nil {
				f.mu.Lock()
				f.errs = append(f.errs, err)
				f.mu.Unlock()
			}
		}()
	}
	return f
}

// Err returns the errors of workers that have stopped on one so far, without waiting; the
// other workers keep running.
func (f *FreeRun) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

// Stop stops every worker at its next action boundary and waits for them.
func (f *FreeRun) Stop() error {
	close(f.stop)
	if f.stopAdmits != nil {
		f.stopAdmits()
	}
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

// defaultFreeLatency is how long a provider call takes, in real time, in a concurrent step of a
// session from NewSession. With none, a worker's whole cycle (claim, call, finalize) is a few
// hundred microseconds, and SQLite's write lock, which is not fair, hands it back to whoever just
// committed: one worker takes every message. A provider that answers in 20 ms, as a payment
// API would at best, leaves the database free while one worker waits, and the other claims.
const defaultFreeLatency = 20 * time.Millisecond

// freeOptions shape a session's concurrent steps.
type freeOptions struct {
	latency time.Duration                              // real time a provider call takes
	sleep   func(ctx context.Context, d time.Duration) // the injected wait (SessionOptions.Sleep)
}

// wait sleeps for the provider latency, or until ctx ends.
func (o freeOptions) wait(ctx context.Context) {
	if o.latency > 0 {
		o.sleep(ctx, o.latency)
	}
}

// runConcurrent runs ws free, each worker on its own goroutine and its own connection, truly
// concurrently, until each has polled and found nothing it can do. The scenario clock does not
// move meanwhile; each provider call takes the session's free latency in real time, while the
// worker holds its lease and the database is free for the others. A busy database (SQLITE_BUSY
// past busy_timeout) makes a worker retry. The timeline ends the phase with a note of who
// processed how many: the split is the scheduler's and SQLite's, and varies from run to run.
func (r *Script) runConcurrent(ctx context.Context, ws []*Worker) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	before := make([]int, len(ws))
	for i, w := range ws {
		before[i] = r.crew.ledger.Worker(w.Name).ProcessingAttempts
	}
	start := make(chan struct{}) // a start gate, so that no worker gets a head start
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := recovered(w.Name, func() error { return runFree(ctx, w, r.free) }); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				cancel()
			}
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = fmt.Sprintf("%s %d", w.Name, r.crew.ledger.Worker(w.Name).ProcessingAttempts-before[i])
	}
	r.crew.Note(fmt.Sprintf("concurrent phase done: %s processed; the split varies from run to run", strings.Join(parts, ", ")))
	return nil
}

// runFree steps w until a poll finds nothing, it has nothing to do, or ctx ends. After a
// provider call it waits for the answer in real time.
func runFree(ctx context.Context, w *Worker, free freeOptions) error {
	for {
		if ctx.Err() != nil {
			return nil
		}
		ev, ok, err := w.Step(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		switch {
		case ev.Outcome == outcomeBusy:
			free.sleep(ctx, time.Millisecond)
		case !ok:
			return nil // crashed, paused, or waiting on a clock that does not move
		case ev.Outcome == OutcomeEmpty || ev.Outcome == OutcomeBlocked:
			return nil
		case ev.Kind == EvCheck:
			free.wait(ctx)
		}
	}
}

// recovered runs a worker's goroutine body and turns a panic into that worker's error, so that
// a bug in one worker ends its run with an error its session reports, never the process (a
// server with many sessions keeps the others).
func recovered(worker string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s stopped on an internal error (panic: %v)", worker, r)
		}
	}()
	return fn()
}
