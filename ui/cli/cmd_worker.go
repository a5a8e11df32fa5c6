package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
)

const workerUsage = `Usage: leaselab worker --db FILE --name W [flags]

Runs one worker, as its own process, against a database that other processes share (made with
"leaselab seed"). It claims, processes and finalizes messages on the wall clock, printing every
action, until no work is left (or it is stopped). Start several in several terminals and watch.

With --slots N it is a hosted worker: one process, one owner, N messages in progress at once.
One fetcher claims, in one statement, a message for every free place in the slots' queue (N
long), N goroutines call the provider (each call takes --pace), and one completer finalizes what
they finished in batches, each finalize guarded by owner and lease version; a heartbeat renews
the leases held. Stopped (SIGTERM, Ctrl-C), it fetches no more, finishes the calls under way,
releases what it had not started, and exits: no message waits for its lease to expire.
`

func cmdWorker(ctx context.Context, b Backends, args []string, stdout, stderr io.Writer) error {
	c, err := parseWorker(args, stderr)
	if err != nil {
		return err
	}
	return c.run(ctx, b, stdout)
}

// workerConfig is one leaselab worker as its flags give it.
type workerConfig struct {
	path, name, provider string
	lease, pace, poll    time.Duration
	hold, skew           time.Duration
	untilEmpty, showSQL  bool
	slots                int
	toggles              map[string]*bool
	st                   engine.Settings
	prov                 *httpProvider // --provider's, or nil: the session's fake one
}

// parseWorker is the flags of leaselab worker made a checked workerConfig.
func parseWorker(args []string, stderr io.Writer) (*workerConfig, error) {
	fs := newFlagSet("worker", workerUsage, stderr)
	c := &workerConfig{toggles: map[string]*bool{}}
	fs.StringVar(&c.path, "db", "", "the shared database file (required; made by leaselab seed)")
	fs.StringVar(&c.name, "name", "", "the worker's name, written to LockedBy (required)")
	fs.DurationVar(&c.lease, "lease", 2*time.Second, "lease length")
	fs.DurationVar(&c.pace, "pace", 0, "pause after every action, e.g. 200ms, to watch it work")
	fs.DurationVar(&c.poll, "poll", 25*time.Millisecond, "how often to poll again when nothing is claimable")
	fs.BoolVar(&c.untilEmpty, "until-empty", true, "stop once no work is left (false: keep polling until stopped)")
	// A worker process always claims (leasing); its other toggles default to the lesson's AFTER
	// settings with fencing on.
	c.st = engine.DefaultSettings()
	c.st.Fencing = true
	for _, t := range engine.AllToggleNames() {
		if t != engine.ToggleLeasing {
			on, _ := c.st.Get(t)
			c.toggles[t] = fs.Bool(t, on, t+" on (=true) or off (=false)")
		}
	}
	fs.BoolVar(&c.showSQL, "sql", false, "print under each action the statements it ran, as the database ran them")
	fs.DurationVar(&c.hold, "hold-finalize", 0, "fault injection: wait this long inside every finalize transaction (for crash tests)")
	fs.IntVar(&c.slots, "slots", 0, "run a hosted worker with this many slots (1 to 1000): batch claims, batch finalizes, heartbeats")
	fs.StringVar(&c.provider, "provider", "", "with --slots: call the payment provider at this http(s) URL (a POST of JSON) instead of the built-in fake one")
	fs.Func("skew", "this worker's clock offset, e.g. +400ms or -1s: its leases are written, and others' judged, by a clock that far off (at most 1h either way)", func(v string) (err error) {
		c.skew, err = engine.ParseSkew(v)
		return err
	})
	if err := parseSharedDB(fs, args, &c.path); err != nil {
		return nil, err
	}
	if err := checkSlots(fs, c.slots); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, c.settings()
}

// Validate refuses a --provider without --slots or that is not a URL, a missing or bad --name,
// and a lease, pace, poll or hold out of range, naming the flag; it reads --provider.
func (c *workerConfig) Validate() error {
	if c.provider != "" {
		if c.slots == 0 {
			return usageError{fmt.Errorf("--provider %s: only a hosted worker (--slots) calls a provider of its own", c.provider)}
		}
		var err error
		if c.prov, err = newHTTPProvider(c.provider, c.name); err != nil {
			return usageError{fmt.Errorf("--provider: %w", err)}
		}
	}
	switch {
	case c.name == "":
		return usageError{errors.New("worker: --name is required")}
	case !workerNameRE.MatchString(c.name):
		return usageError{fmt.Errorf("--name %q: letters, digits, '-' and '_', up to 32, starting with a letter or digit", c.name)}
	case engine.CheckLease(c.lease) != nil:
		return usageError{fmt.Errorf("--lease %s: %w", c.lease, engine.CheckLease(c.lease))}
	case c.pace < 0, c.poll < 0, c.hold < 0:
		return usageError{fmt.Errorf("--pace, --poll and --hold-finalize take durations of 0 or more (got %s, %s, %s)", c.pace, c.poll, c.hold)}
	case c.pace >= c.lease:
		// The worker pauses between its claim and its provider call; past its lease it gives the
		// message up without calling, so it would claim again and again and never finish one.
		return usageError{fmt.Errorf("--pace %s: want less than --lease %s (a worker that pauses past its lease after every claim never gets to call the provider)", c.pace, c.lease)}
	}
	return nil
}

// settings sets the lease, the heartbeat and the toggles the flags give, and checks the
// heartbeat against the lease.
func (c *workerConfig) settings() error {
	c.st.Lease, c.st.HeartbeatEvery = c.lease, engine.DefaultHeartbeat(c.lease)
	for t, p := range c.toggles {
		c.st.Set(t, *p)
	}
	if err := c.st.CheckHeartbeat(); err != nil {
		return usageError{fmt.Errorf("--lease %s --heartbeat: %w", c.lease, err)}
	}
	return nil
}

// run opens the shared database and works on it as one worker (or a hosted one, --slots) until
// no work is left or it is stopped.
func (c *workerConfig) run(ctx context.Context, b Backends, stdout io.Writer) error {
	db, err := openShared(ctx, b, c.path)
	if err != nil {
		return err
	}
	defer db.Close()
	if c.hold > 0 {
		db.HoldFinalize(c.hold, func(key string) {
			fmt.Fprintf(stdout, "%s %s holding its finalize transaction of %s open for %s\n",
				engine.FormatClock(time.Now()), engine.WorkerName(c.name), key, c.hold)
		})
	}
	sc := &engine.Scenario{Name: "worker", Title: "worker process", Source: "worker", Settings: c.st,
		Workers: []engine.WorkerSpec{{Short: c.name, ID: engine.WorkerName(c.name), Skew: c.skew}}}
	sess, err := engine.NewSessionWith(ctx, sc, db, engine.SessionOptions{Clock: engine.NewWallClock(time.Now)})
	if err != nil {
		return err
	}
	defer sess.Close()
	if c.slots > 0 {
		return runHosted(ctx, sess, hostedRun{slots: c.slots, pace: c.pace, poll: c.poll, untilEmpty: c.untilEmpty, provider: c.prov}, stdout)
	}
	lock := "the database's write lock"
	if b.Capabilities(c.path).RowLocks { // PostgreSQL locks rows, not the database
		lock = "a row lock"
	}
	return c.serve(ctx, sess, lock, stdout)
}

// serve runs the session's one worker, printing each event (and its SQL with --sql), the
// waits for lock, and its counts at the end.
func (c *workerConfig) serve(ctx context.Context, sess *engine.Session, lock string, stdout io.Writer) error {
	sess.TraceSQL(c.showSQL)
	w := sess.Workers()[0]
	var last engine.Event
	waits := &lockWait{out: stdout, name: w.Name, lock: lock, pace: c.pace, poll: c.poll,
		busy: func() int { return sess.Ledger().Worker(w.Name).BusyRetries }}
	if c.hold == 0 { // a held finalize waits on purpose, and says so
		stop := waits.watch(time.Now())
		defer stop()
	}
	// Stopped by a signal or a closed output, it finishes the message it holds within its lease
	// rather than leave the row Processing for another worker to wait out.
	err := w.Serve(ctx, nil, engine.ServeOptions{Pace: c.pace, Poll: c.poll, UntilEmpty: c.untilEmpty, Finish: c.lease,
		OnEvent: func(e engine.Event) {
			waits.mu.Lock()
			defer waits.mu.Unlock()
			waits.answered(time.Now(), e)
			// A blocked worker polls again and again: print a blocked poll once per lease it waits on.
			if e.Kind == engine.EvClaim && e.Outcome == "blocked" && last.Outcome == "blocked" && e.Key == last.Key && e.Until.Equal(last.Until) {
				return
			}
			last = e
			fmt.Fprintln(stdout, words.Escape(e.String())) // it may quote a LockedBy another process wrote
			for _, l := range words.SQLLines(e.Trace) {
				fmt.Fprintln(stdout, "    sql: "+words.Escape(l))
			}
		}})
	waits.ended(time.Now(), err)
	l := sess.Ledger().Worker(w.Name)
	fmt.Fprintf(stdout, "%s done: %d claims won (%d reclaims), %d blocked, %d processed, %d finalized, %d rejected, %d busy retries\n",
		w.Name, l.ClaimsWon, l.Reclaims, l.ClaimsBlocked, l.ProcessingAttempts, l.Finalized, l.RejectedFinalizes, l.BusyRetries)
	return err
}

// lockWait tells, on a worker process's output, of a database call that has not answered for a
// while: the worker waits for a lock another connection holds (SQLite's write lock, up to
// busy_timeout an attempt and then retried; a PostgreSQL row lock, up to lock_timeout). Without
// it a worker behind another program's open transaction printed nothing for minutes. It is told
// after 2 s, then at 4, 8, 16 and 32 s, then every 30 s, and when the wait ends, with what the
// worker got. A call starts, as near as can be told from outside the worker, when the pause
// Serve takes after an event (pace, or poll after nothing to do) is over.
type lockWait struct {
	mu         sync.Mutex // held while a line is printed, by the watch and by the worker's events
	out        io.Writer
	name, lock string
	pace, poll time.Duration
	busy       func() int // the worker's busy retries so far (called on the worker's goroutine only)

	since   time.Time     // when the call now running started
	next    time.Duration // how long a wait must last to be told next; 0: never again
	told    time.Duration // the wait last told; 0: none told since the last answer
	busyWas int           // the busy retries when the call now running started
}

// firstWaitLine is how long a call runs before the worker says it is waiting.
const firstWaitLine = 2 * time.Second

// watch starts telling of long waits, the first call starting at now; stop ends it. It is
// called on the worker's goroutine, before Serve.
func (lw *lockWait) watch(now time.Time) (stop func()) {
	lw.since, lw.next, lw.busyWas = now, firstWaitLine, lw.busy()
	done := make(chan struct{})
	t := time.NewTicker(100 * time.Millisecond)
	go func() {
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				lw.mu.Lock()
				lw.tick(now)
				lw.mu.Unlock()
			}
		}
	}()
	return func() { close(done) }
}

// tick tells of the wait when it has lasted long enough. lw.mu is held.
func (lw *lockWait) tick(now time.Time) {
	if lw.next == 0 || now.Sub(lw.since) < lw.next {
		return
	}
	fmt.Fprintf(lw.out, "%s %s waiting for %s (held by another connection) for %s…\n",
		engine.FormatClock(now), lw.name, lw.lock, lw.next)
	lw.told = lw.next
	lw.next = min(2*lw.next, lw.next+30*time.Second)
}

// answered is an event of the worker at now: the call it made has answered. It says what the
// worker got after a wait it told of, and starts the next call's clock after Serve's pause.
// lw.mu is held.
func (lw *lockWait) answered(now time.Time, e engine.Event) {
	if !e.At.IsZero() {
		now = e.At // when the transaction took effect, as the event's own line says
	}
	if lw.told > 0 {
		fmt.Fprintf(lw.out, "%s %s got %s after %s%s; it goes on\n", engine.FormatClock(now), lw.name, lw.lock,
			now.Sub(lw.since).Round(100*time.Millisecond), lw.retries())
	}
	pause := lw.pace
	if e.Outcome == engine.OutcomeBlocked || e.Outcome == engine.OutcomeEmpty {
		pause = max(lw.poll, lw.pace)
	}
	lw.since, lw.told, lw.busyWas = now.Add(pause), 0, lw.busy()
	if lw.next != 0 {
		lw.next = firstWaitLine
	}
}

// ended is Serve's return at now, with err: a wait told of ends without the lock.
func (lw *lockWait) ended(now time.Time, err error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.told > 0 {
		why := "it was stopped"
		if err != nil {
			why = "it stopped on an error"
		}
		fmt.Fprintf(lw.out, "%s %s stopped waiting for %s after %s%s: %s\n", engine.FormatClock(now), lw.name, lw.lock,
			now.Sub(lw.since).Round(100*time.Millisecond), lw.retries(), why)
	}
	lw.next = 0 // nothing more is told
}

// retries says how many attempts of the wait gave up at the database's timeout (busy_timeout,
// lock_timeout) and were tried again, counted from the worker's busy retries.
func (lw *lockWait) retries() string {
	switch n := lw.busy() - lw.busyWas; {
	case n <= 0:
		return ""
	case n == 1:
		return " (1 attempt gave up at the database's timeout and was tried again)"
	default:
		return fmt.Sprintf(" (%d attempts gave up at the database's timeout and were tried again)", n)
	}
}

// maxSlots is the most slots a hosted worker takes: each is a goroutine and a message held.
const maxSlots = 1000

// checkSlots refuses --slots out of range, and the flags a hosted worker does not have: it always
// claims atomically, finalizes guarded and fenced and renews its leases, so the toggles do not
// apply, nor --sql (one statement serves several messages) or --hold-finalize.
func checkSlots(fs *flag.FlagSet, slots int) error {
	if slots == 0 {
		return nil
	}
	if slots < 0 || slots > maxSlots {
		return usageError{fmt.Errorf("--slots %d: want 1 to %d", slots, maxSlots)}
	}
	var bad string
	fs.Visit(func(f *flag.Flag) {
		if _, err := engine.DefaultSettings().Get(f.Name); err == nil || f.Name == "sql" || f.Name == "hold-finalize" {
			bad = f.Name
		}
	})
	if bad != "" {
		return usageError{fmt.Errorf("--%s: a hosted worker (--slots) always claims in batches and finalizes guarded and fenced; it takes no --%s", bad, bad)}
	}
	return nil
}

// hostedRun is what the command line gives a hosted worker: its slots, pace and poll, whether it
// stops once no work is left, and the provider it calls (nil: the session's fake one).
type hostedRun struct {
	slots      int
	pace, poll time.Duration
	untilEmpty bool
	provider   *httpProvider
}

// runHosted runs the session's worker as a hosted worker, printing its events, each fetch and
// each completer batch, and at the end what it did.
func runHosted(ctx context.Context, sess *engine.Session, hr hostedRun, stdout io.Writer) error {
	n, pace, poll := hr.slots, hr.pace, hr.poll
	var mu sync.Mutex // one line at a time, from the fetcher, the completer and the heartbeat
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stdout, format+"\n", args...)
	}
	name := sess.Workers()[0].Name
	process := func(ctx context.Context, m engine.Message) (engine.ProviderResult, error) {
		if pace > 0 {
			select {
			case <-ctx.Done():
				return engine.ProviderResult{}, ctx.Err()
			case <-time.After(pace):
			}
		}
		if hr.provider != nil {
			return hr.provider.call(ctx, m)
		}
		return sess.Provider().CheckPaymentStatus(m.IdempotencyKey), nil
	}
	at := ""
	if hr.provider != nil {
		at = ", provider " + hr.provider.String()
	}
	say("%s %s hosted: %d slots, one fetcher, one completer, lease %s%s", engine.FormatClock(time.Now()), name, n, sess.Settings().Lease, at)
	stopped, told := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(told)
		select {
		case <-ctx.Done():
			say("%s %s stopping: no more fetches; the calls under way finish, what was not started is released", engine.FormatClock(time.Now()), name)
		case <-stopped:
		}
	}()
	st, err := sess.Host(ctx, 0, engine.HostOptions{Slots: n, Poll: poll, UntilEmpty: hr.untilEmpty, Process: process,
		OnEvent: func(e engine.Event) { say("%s", words.Escape(e.String())) },
		OnFetch: func(free int, got []engine.Message) {
			say("%s %s fetched %d for %d free %s in one claim: %s", engine.FormatClock(time.Now()), name, len(got), free,
				words.Plural(free, "slot"), keyRange(got))
		},
		OnBatch: func(reqs []engine.FinalizeRequest, res []engine.FinalizeResult) {
			ok := 0
			for _, r := range res {
				if r.Committed {
					ok++
				}
			}
			say("%s %s completer: %d %s in one transaction, %d committed, %d rejected", engine.FormatClock(time.Now()), name,
				len(reqs), words.Plural(len(reqs), "finalize"), ok, len(reqs)-ok)
		}})
	close(stopped)
	<-told
	say("%s done: %d slots, %d fetches (%d claimed), %d batches (largest %d), %d finalized, %d rejected, %d released, %d heartbeats (%d lost), %d busy retries",
		name, n, st.Fetches, st.Claimed, st.Batches, st.MaxBatch, st.Finalized, st.Rejected, st.Released, st.Renewed, st.LostLeases, st.BusyRetries)
	return err
}

// keyRange names the messages of a fetch: "PAY-001", or "PAY-001 … PAY-004".
func keyRange(ms []engine.Message) string {
	first, last := words.Escape(ms[0].IdempotencyKey), words.Escape(ms[len(ms)-1].IdempotencyKey)
	if len(ms) == 1 {
		return first
	}
	return first + " … " + last
}
