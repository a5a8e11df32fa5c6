package engine

import (
	"context"
	"errors"
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
}

// Serve runs w continuously: one action after another, polling when there is nothing to do,
// until stop is closed, ctx ends, or (UntilEmpty) no work is left. Actions run with ctx, so a
// stop never cuts a transaction in half: the loop checks stop only between actions.
func (w *Worker) Serve(ctx context.Context, stop <-chan struct{}, opt ServeOptions) error {
	if opt.Poll <= 0 {
		opt.Poll = 5 * time.Millisecond
	}
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return nil
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
			ev, acted, err = w.Step(ctx)
		}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrNotNow) {
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
			t := time.NewTimer(wait)
			select {
			case <-stop:
				t.Stop()
				return nil
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
}

// FreeRun is every worker of a session running on its own goroutine and connection, truly
// concurrently, while the session can still crash, pause, restart workers and move the clock.
type FreeRun struct {
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

// StartFree starts every worker (crashed ones idle until restarted) at the given pace.
func (s *Session) StartFree(ctx context.Context, pace time.Duration) *FreeRun {
	f := &FreeRun{stop: make(chan struct{})}
	for _, w := range s.workers {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			if err := w.Serve(ctx, f.stop, ServeOptions{Pace: pace}); err != nil {
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
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}
