package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"

	"leaselab/assets"
	"leaselab/engine"
)

// labRoot is the lab's composition root: it turns a scenario name into a session on a database
// of its own (scenario → database → session), and closes what it opened before. Both faces of
// the lab use it: cmdLab once for the local terminal, cmdServe once per SSH connection.
type labRoot struct {
	flags *scenarioFlags // --db and the scenario flags; the zero value: a temporary folder, as declared
	fs    *flag.FlagSet  // the parsed flag set, to tell set flags from defaults
	// builtinOnly refuses anything but a built-in scenario's name (a server never reads its
	// own files on an attendee's behalf).
	builtinOnly bool
	caps        scenarioCaps

	dbs *dbOpener // the --db file (or temporary folders): remembers the file it made, for R and tab

	mu      sync.Mutex
	closeFn func() // closes the open session, its database, and removes its temporary folder
	path    string // the open session's database file

	// found are the share codes of the violations the explore key found, by the file each was
	// written to (the lab opens that file): S there gives the code of the counterexample.
	found sync.Map
}

// scenarioCaps bound what one session may hold (0: no bound).
type scenarioCaps struct {
	messages, workers int
	why               string // what a refusal adds: why the bound, and what to do instead
}

// labMaxMessages is the most messages the lab opens: it reads and draws every row at each step,
// and at 5,000 a step takes about 50 ms (BenchmarkStep: 11 ms at 1,000), opening about 2 s;
// at 100,000 it opened in 30–45 s and stepped in 1–1.8 s. Larger runs are for run and stress.
const labMaxMessages = 5000

// labCaps are the lab's bounds on a terminal.
var labCaps = scenarioCaps{messages: labMaxMessages,
	why: "the lab reads and draws every row at each step; for more, use \"leaselab run\" or \"leaselab stress\""}

// newLabRoot returns a root on b for the scenario flags sf parsed by fs (nil, nil: no flags).
func newLabRoot(b Backends, sf *scenarioFlags, fs *flag.FlagSet) *labRoot {
	if sf == nil {
		sf = &scenarioFlags{}
	}
	if fs == nil {
		fs = flag.NewFlagSet("lab", flag.ContinueOnError)
	}
	return &labRoot{flags: sf, fs: fs, dbs: sf.dbs(b, false)}
}

// Check refuses a --db file the lab may not use (not leaselab's, or holding rows without
// --reset) before anything is written or a screen opens.
func (r *labRoot) Check(ctx context.Context) error { return r.dbs.check(ctx) }

// load reads a scenario, checks it against the root's rules, and applies the flags.
func (r *labRoot) load(nameOrFile string) (*engine.Scenario, error) {
	if r.builtinOnly && !slices.Contains(assets.Names(), nameOrFile) {
		return nil, usageError{fmt.Errorf("unknown scenario %q: choose one of %s", nameOrFile, strings.Join(assets.Names(), ", "))}
	}
	sc, err := loadScenario(r.dbs.b, nameOrFile, r.flags, r.fs)
	if err != nil {
		return nil, err
	}
	if c := r.caps.messages; c > 0 && sc.Messages > c {
		why := ""
		if r.caps.why != "" {
			why = " (" + r.caps.why + ")"
		}
		return nil, usageError{fmt.Errorf("scenario %s: %d messages, more than the %d a session may hold%s", sc.Name, sc.Messages, c, why)}
	}
	if c := r.caps.workers; c > 0 && len(sc.Workers) > c {
		return nil, usageError{fmt.Errorf("scenario %s: %d workers, more than the %d a session may run", sc.Name, len(sc.Workers), c)}
	}
	return sc, nil
}

// Open closes the session opened before, if any, then opens nameOrFile on a fresh database:
// the --db file, or a new temporary folder. It is ui.Config.Open.
func (r *labRoot) Open(ctx context.Context, nameOrFile string) (*engine.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeLocked()
	sc, err := r.load(nameOrFile)
	if err != nil {
		return nil, err
	}
	db, _, cleanup, err := r.dbs.open(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := engine.NewSession(ctx, sc, db)
	if err != nil {
		db.Close()
		cleanup()
		return nil, err
	}
	r.closeFn = func() { sess.Close(); db.Close(); cleanup() }
	r.path = db.Path()
	return sess, nil
}

// Close closes the open session and its database, and removes its temporary folder. The
// session's workers must have stopped (ui.Program.Close does that). Closing twice is harmless.
func (r *labRoot) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeLocked()
	return nil
}

func (r *labRoot) closeLocked() {
	if r.closeFn != nil {
		r.closeFn()
		r.closeFn, r.path = nil, ""
	}
}

// DBPath is the database file of the open session ("" when none is open).
func (r *labRoot) DBPath() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.path
}
