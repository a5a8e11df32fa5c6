package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The workload every system runs: messages messages, workers worker processes of slots slots
// each, a provider call of providerLatency per attempt, and a lease (visibility timeout, River's
// RescueStuckJobsAfter) of lease.
const (
	messages        = 1200
	workers         = 3
	slots           = 4
	lease           = 2 * time.Second
	providerLatency = 40 * time.Millisecond
)

// system is one queue under test, with its worker program and its way of reading what happened.
type system interface {
	name() string
	// applies says whether fault f can be put to the system, and why not.
	applies(f fault, env *harness) (bool, string)
	// stopFor is how long a SIGSTOP lasts: past the system's own timeout, and past the time it
	// takes to notice it.
	stopFor() time.Duration
	// drainFor is how long a run waits, after its last fault, for the queue to drain.
	drainFor() time.Duration
	// settings says how the system is configured, for the report.
	settings() string
	prepare(ctx context.Context, r *run) error
	command(r *run, w *worker, skew time.Duration) *exec.Cmd
	onLine(r *run, w *worker, line string)
	// progress counts the messages completed, and those the system will never run again.
	progress(ctx context.Context, r *run) (done, dead int, err error)
	// collect writes every message's state after the run into the ledger (finals), and the
	// payment writes its witness kept (writes).
	collect(ctx context.Context, r *run) error
}

// harness is what every run shares: the leaselab binary, the PostgreSQL server, the ledger and
// its provider, and the small tmpfs for the disk-full runs.
type harness struct {
	dir     string
	bin     string // leaselab, built from this repository
	pg      *pgServer
	led     *ledger
	prov    *provider
	tmpfs   string // "" when no tmpfs could be mounted
	noTmpfs string // why not
}

// run is one system under one fault.
type run struct {
	h      *harness
	id     string // the run's name: database, ledger rows, transaction ids
	sys    system
	fault  fault
	seed   int64
	dir    string // the run's folder: logs
	disk   string // the folder of its SQLite database (on the tmpfs when there is one)
	pgDB   string // its PostgreSQL database
	plan   plan
	logMu  sync.Mutex
	events []string
	notes  []string // what the report says under the table about this run
}

// note is a line for the report (and the run's log).
func (r *run) note(format string, args ...any) {
	r.logf(format, args...)
	r.logMu.Lock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
	r.logMu.Unlock()
}

func (r *run) logf(format string, args ...any) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	r.events = append(r.events, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
}

// runOne runs sys under fault f with seed, and counts what happened.
func runOne(t *testing.T, h *harness, sys system, f fault, seed int64, index int) result {
	ctx := context.Background()
	r := &run{h: h, id: fmt.Sprintf("r%02d_%s_%s", index, sanitize(sys.name()), sanitize(string(f))), sys: sys, fault: f, seed: seed}
	r.dir = filepath.Join(h.dir, r.id)
	r.disk = r.dir
	if h.tmpfs != "" {
		r.disk = filepath.Join(h.tmpfs, r.id)
	}
	r.pgDB = r.id
	for _, d := range []string{r.dir, r.disk} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		if r.disk != r.dir {
			os.RemoveAll(r.disk) // the tmpfs is small: room for the next run
		}
	}()
	if err := sys.prepare(ctx, r); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	r.plan = makePlan(f, seed, workers, sys.stopFor(), lease)
	logFile, err := os.Create(filepath.Join(r.dir, "workers.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	fl := newFleet(workers, func(w *worker, skew time.Duration) *exec.Cmd { return sys.command(r, w, skew) },
		func(w *worker, line string) { sys.onLine(r, w, line) }, logFile)
	for i, d := range r.plan.skews {
		fl.workers[i].skew = d
	}
	names := make([]string, workers)
	for i, w := range fl.workers {
		names[i] = w.name
	}

	start := time.Now()
	fl.start()
	type injected struct {
		last time.Time
		err  error
	}
	faultsDone := make(chan injected, 1)
	go func() {
		last, err := inject(ctx, r.plan, target{fleet: fl, pg: h.pg, pgDB: r.pgDB, disk: r.disk, logf: r.logf}, start)
		faultsDone <- injected{last, err}
	}()

	var (
		lastFault      time.Time
		faultsOver     bool
		done, dead     int
		lastDone       int
		lastCompletion = start
	)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case in := <-faultsDone:
			if in.err != nil {
				fl.shutdown(10 * time.Second)
				t.Fatalf("faults: %v", in.err)
			}
			lastFault, faultsOver = in.last, true
			continue
		case <-tick.C:
		}
		if d, dd, err := sys.progress(ctx, r); err == nil { // a fault may stop the harness reading too
			done, dead = d, dd
		}
		if done > lastDone {
			lastDone, lastCompletion = done, time.Now()
		}
		if !faultsOver {
			continue
		}
		if done+dead >= messages || time.Since(lastFault) > sys.drainFor() {
			break
		}
	}
	fl.shutdown(10 * time.Second)
	if err := sys.collect(ctx, r); err != nil {
		t.Fatalf("collect: %v", err)
	}
	res, err := count(h.led, r)
	if err != nil {
		t.Fatal(err)
	}
	res.plan = r.plan.describe(names)
	res.notes = r.notes
	res.restarts = fl.restarts()
	res.drained = done >= messages
	res.drain = max(lastCompletion.Sub(lastFault), 0)
	res.waited = time.Since(lastFault)
	if elapsed := lastCompletion.Sub(start); elapsed > 0 {
		res.rate = float64(done) / elapsed.Seconds()
	}
	os.WriteFile(filepath.Join(r.dir, "faults.log"), []byte(joinLines(r.events)), 0o644)
	return res
}

func sanitize(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

func joinLines(ls []string) string {
	s := ""
	for _, l := range ls {
		s += l + "\n"
	}
	return s
}
