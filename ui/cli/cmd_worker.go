package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"leaselab/engine"
)

const workerUsage = `Usage: leaselab worker --db FILE --name W [flags]

Runs one worker, as its own process, against a database that other processes share (made with
"leaselab seed"). It claims, processes and finalizes messages on the wall clock, printing every
action, until no work is left (or it is stopped). Start several in several terminals and watch.
`

func cmdWorker(ctx context.Context, b Backends, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker", workerUsage, stderr)
	path := fs.String("db", "", "the shared database file (required; made by leaselab seed)")
	name := fs.String("name", "", "the worker's name, written to LockedBy (required)")
	lease := fs.Duration("lease", 2*time.Second, "lease length")
	pace := fs.Duration("pace", 0, "pause after every action, e.g. 200ms, to watch it work")
	poll := fs.Duration("poll", 25*time.Millisecond, "how often to poll again when nothing is claimable")
	untilEmpty := fs.Bool("until-empty", true, "stop once no work is left (false: keep polling until stopped)")
	// A worker process always claims (leasing); its other toggles default to the lesson's AFTER
	// settings with fencing on.
	st := engine.DefaultSettings()
	st.Fencing = true
	toggles := map[string]*bool{}
	for _, t := range engine.AllToggleNames() {
		if t != engine.ToggleLeasing {
			on, _ := st.Get(t)
			toggles[t] = fs.Bool(t, on, t+" on (=true) or off (=false)")
		}
	}
	showSQL := fs.Bool("sql", false, "print under each action the statements it ran, as the database ran them")
	hold := fs.Duration("hold-finalize", 0, "fault injection: wait this long inside every finalize transaction (for crash tests)")
	if pos, err := parseInterleaved(fs, args); err != nil {
		return usageFlag(err)
	} else if len(pos) > 0 {
		return usageError{fmt.Errorf("worker takes no arguments, got %q", pos[0])}
	}
	switch {
	case *path == "":
		return usageError{errors.New("worker: --db FILE is required")}
	case *name == "":
		return usageError{errors.New("worker: --name is required")}
	case !workerNameRE.MatchString(*name):
		return usageError{fmt.Errorf("--name %q: letters, digits, '-' and '_', up to 32, starting with a letter or digit", *name)}
	case engine.CheckLease(*lease) != nil:
		return usageError{fmt.Errorf("--lease %s: %w", *lease, engine.CheckLease(*lease))}
	case *pace < 0, *poll < 0, *hold < 0:
		return usageError{fmt.Errorf("--pace, --poll and --hold-finalize take durations of 0 or more (got %s, %s, %s)", *pace, *poll, *hold)}
	case *pace >= *lease:
		// The worker pauses between its claim and its provider call; past its lease it gives the
		// message up without calling, so it would claim again and again and never finish one.
		return usageError{fmt.Errorf("--pace %s: want less than --lease %s (a worker that pauses past its lease after every claim never gets to call the provider)", *pace, *lease)}
	}
	st.Lease, st.HeartbeatEvery = *lease, engine.DefaultHeartbeat(*lease)
	for t, p := range toggles {
		st.Set(t, *p)
	}
	if err := st.CheckHeartbeat(); err != nil {
		return usageError{fmt.Errorf("--lease %s --heartbeat: %w", *lease, err)}
	}
	db, err := openShared(ctx, b, *path)
	if err != nil {
		return err
	}
	defer db.Close()
	if *hold > 0 {
		db.HoldFinalize(*hold, func(key string) {
			fmt.Fprintf(stdout, "%s %s holding its finalize transaction of %s open for %s\n",
				engine.FormatClock(time.Now()), engine.WorkerName(*name), key, *hold)
		})
	}
	sc := &engine.Scenario{Name: "worker", Title: "worker process", Source: "worker", Settings: st,
		Workers: []engine.WorkerSpec{{Short: *name, ID: engine.WorkerName(*name)}}}
	sess, err := engine.NewSessionWith(ctx, sc, db, engine.SessionOptions{Clock: engine.NewWallClock(time.Now)})
	if err != nil {
		return err
	}
	defer sess.Close()
	sess.TraceSQL(*showSQL)
	w := sess.Workers()[0]
	var last engine.Event
	// Stopped by a signal or a closed output, it finishes the message it holds within its lease
	// rather than leave the row Processing for another worker to wait out.
	err = w.Serve(ctx, nil, engine.ServeOptions{Pace: *pace, Poll: *poll, UntilEmpty: *untilEmpty, Finish: *lease,
		OnEvent: func(e engine.Event) {
			// A blocked worker polls again and again: print a blocked poll once per lease it waits on.
			if e.Kind == engine.EvClaim && e.Outcome == "blocked" && last.Outcome == "blocked" && e.Key == last.Key && e.Until.Equal(last.Until) {
				return
			}
			last = e
			fmt.Fprintln(stdout, engine.Escape(e.String())) // it may quote a LockedBy another process wrote
			for _, l := range engine.SQLLines(e.Trace) {
				fmt.Fprintln(stdout, "    sql: "+engine.Escape(l))
			}
		}})
	l := sess.Ledger().Worker(w.Name)
	fmt.Fprintf(stdout, "%s done: %d claims won (%d reclaims), %d blocked, %d processed, %d finalized, %d rejected, %d busy retries\n",
		w.Name, l.ClaimsWon, l.Reclaims, l.ClaimsBlocked, l.ProcessingAttempts, l.Finalized, l.RejectedFinalizes, l.BusyRetries)
	return err
}
