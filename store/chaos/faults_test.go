package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fault is one kind of trouble a run is put through.
type fault string

const (
	faultNone      fault = "none"         // no fault: the baseline
	faultKill      fault = "kill"         // SIGKILL of worker processes
	faultStop      fault = "stop"         // SIGSTOP past the lease or visibility timeout, then SIGCONT
	faultTerminate fault = "pg-terminate" // pg_terminate_backend of every worker connection, every second
	faultRestart   fault = "pg-restart"   // PostgreSQL restarted mid-run
	faultDiskFull  fault = "disk-full"    // the database's disk full for a moment
	faultSkew      fault = "skew"         // worker processes whose clocks disagree, and a clock that jumps
)

// allFaults in the table's order.
var allFaults = []fault{faultNone, faultKill, faultStop, faultTerminate, faultRestart, faultDiskFull, faultSkew}

// step is one action of a plan, at an offset from the run's start.
type step struct {
	at     time.Duration
	kind   fault
	worker int
	hold   time.Duration // stop: how long stopped; disk-full: how long full
	skew   time.Duration // skew: the clock offset the worker's next process gets
}

// plan is a run's faults, drawn from its seed: the same seed gives the same steps, at the same
// offsets, on the same workers (not the same interleaving: the machine decides that).
type plan struct {
	fault fault
	seed  int64
	skews []time.Duration // skew: each worker's clock offset from the start
	steps []step
}

// makePlan draws the plan of fault f for workers worker processes. stopFor is how long a SIGSTOP
// lasts (past the system's timeout); lease the system's lease, which the skews are measured in.
func makePlan(f fault, seed int64, workers int, stopFor, lease time.Duration) plan {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(len(f))*7919))
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	p := plan{fault: f, seed: seed}
	switch f {
	case faultKill:
		// Four kills of random workers in the first 3.5 s, each process started again 300 ms
		// after it died.
		for range 4 {
			p.steps = append(p.steps, step{at: between(500*time.Millisecond, 3500*time.Millisecond), kind: f, worker: rng.IntN(workers)})
		}
	case faultStop:
		// Two workers stopped, one after the other, each for stopFor: their leases (jobs,
		// messages) run out while they sleep, and they wake up holding them.
		a := rng.IntN(workers)
		b := (a + 1 + rng.IntN(workers-1)) % workers
		first := between(500*time.Millisecond, time.Second)
		p.steps = append(p.steps, step{at: first, kind: f, worker: a, hold: stopFor},
			step{at: first + between(time.Second, 2*time.Second), kind: f, worker: b, hold: stopFor})
	case faultTerminate:
		// Every second for five seconds, every worker connection is terminated.
		for i := range 5 {
			p.steps = append(p.steps, step{at: time.Duration(i+1) * time.Second, kind: f})
		}
	case faultRestart:
		p.steps = append(p.steps, step{at: between(time.Second, 2500*time.Millisecond), kind: f})
	case faultDiskFull:
		// The disk full twice, 1.5 s each time.
		first := between(800*time.Millisecond, 1500*time.Millisecond)
		p.steps = append(p.steps, step{at: first, kind: f, hold: 1500 * time.Millisecond},
			step{at: first + between(2*time.Second, 3*time.Second), kind: f, hold: 1500 * time.Millisecond})
	case faultSkew:
		// One worker's clock runs ahead and one's behind by one to two leases, from the start;
		// the third's clock jumps by as much mid-run (its process started again with it).
		p.skews = make([]time.Duration, workers)
		for i := range workers - 1 {
			d := between(lease, 2*lease).Round(time.Millisecond)
			if i%2 == 1 {
				d = -d
			}
			p.skews[i] = d
		}
		d := between(lease, 2*lease).Round(time.Millisecond)
		if rng.IntN(2) == 0 {
			d = -d
		}
		p.steps = append(p.steps, step{at: between(1500*time.Millisecond, 3*time.Second), kind: f, worker: workers - 1, skew: d})
	}
	sortSteps(p.steps)
	return p
}

func sortSteps(s []step) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].at < s[j-1].at; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// describe says in a few words what the plan does, for the table.
func (p plan) describe(workers []string) string {
	var parts []string
	for _, s := range p.steps {
		at := fmt.Sprintf("%.1fs", s.at.Seconds())
		switch s.kind {
		case faultKill:
			parts = append(parts, "kill "+workers[s.worker]+" "+at)
		case faultStop:
			parts = append(parts, fmt.Sprintf("stop %s %s for %s", workers[s.worker], at, s.hold))
		case faultTerminate:
			parts = append(parts, "terminate "+at)
		case faultRestart:
			parts = append(parts, "restart "+at)
		case faultDiskFull:
			parts = append(parts, fmt.Sprintf("full %s for %s", at, s.hold))
		case faultSkew:
			parts = append(parts, fmt.Sprintf("%s jumps to %+.1fs at %s", workers[s.worker], s.skew.Seconds(), at))
		}
	}
	if p.fault == faultTerminate {
		parts = []string{fmt.Sprintf("terminate every 1s ×%d", len(p.steps))}
	}
	if p.skews != nil {
		var sk []string
		for i, d := range p.skews {
			sk = append(sk, fmt.Sprintf("%s %+.1fs", workers[i], d.Seconds()))
		}
		parts = append([]string{strings.Join(sk, ", ")}, parts...)
	}
	return strings.Join(parts, "; ")
}

// target is what a plan acts on: the run's fleet, its server and database, its disk.
type target struct {
	fleet *fleet
	pg    *pgServer
	pgDB  string // the run's database on pg
	disk  string // the folder on the small tmpfs that holds the run's database (disk-full)
	logf  func(format string, args ...any)
}

// inject carries out p's steps from start, and returns when the last one is over, with when that
// was (start when there were none).
func inject(ctx context.Context, p plan, t target, start time.Time) (time.Time, error) {
	last := start
	ends := make(chan time.Time, len(p.steps))
	pending := 0
	for _, s := range p.steps {
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(time.Until(start.Add(s.at))):
		}
		w := t.fleet.workers[s.worker]
		switch s.kind {
		case faultKill:
			// A worker between two processes (just killed) is killed once its next has started.
			ok := w.signalRunning(syscall.SIGKILL, 3*time.Second)
			t.logf("fault: SIGKILL %s (%v)", w.name, ok)
			last = time.Now()
		case faultStop:
			ok := w.signal(syscall.SIGSTOP)
			t.logf("fault: SIGSTOP %s for %s (%v)", w.name, s.hold, ok)
			pending++
			go func(w *worker, hold time.Duration) {
				time.Sleep(hold)
				w.signal(syscall.SIGCONT)
				t.logf("fault: SIGCONT %s", w.name)
				ends <- time.Now()
			}(w, s.hold)
		case faultTerminate:
			n, err := t.pg.terminateWorkers(ctx, t.pgDB)
			t.logf("fault: pg_terminate_backend of %d worker connections (%v)", n, err)
			last = time.Now()
		case faultRestart:
			took, err := t.pg.restart()
			if err != nil {
				return last, err
			}
			t.logf("fault: PostgreSQL restarted in %s", took.Round(time.Millisecond))
			last = time.Now()
		case faultDiskFull:
			release, err := fillDisk(t.disk)
			if err != nil {
				return last, err
			}
			t.logf("fault: disk full")
			time.Sleep(s.hold)
			release()
			t.logf("fault: disk freed")
			last = time.Now()
		case faultSkew:
			w.setSkew(s.skew)
			ok := w.signal(syscall.SIGTERM) // its next process starts with the new clock
			t.logf("fault: %s's clock jumps to %+v (%v)", w.name, s.skew, ok)
			last = time.Now()
		}
	}
	for range pending {
		if e := <-ends; e.After(last) {
			last = e
		}
	}
	return last, nil
}

// fillDisk fills the file system that holds dir, with one file, until it has no byte left;
// release removes the file.
func fillDisk(dir string) (release func(), err error) {
	path := filepath.Join(dir, "ballast")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	release = func() { f.Close(); os.Remove(path) }
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		release()
		return nil, err
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 0, int64(st.Bavail)*st.Bsize); err != nil && !errors.Is(err, unix.ENOSPC) {
		release()
		return nil, fmt.Errorf("fill %s: %w", dir, err)
	}
	// What fallocate left (another file grew meanwhile): written a page at a time.
	page := make([]byte, 4096)
	for {
		if _, err := f.Write(page); err != nil {
			break
		}
	}
	return release, nil
}

// mountTmpfs mounts a tmpfs of size bytes on dir (as root; the disk-full runs are skipped
// otherwise) and returns its unmount.
func mountTmpfs(dir string, size int64) (func(), error) {
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mount -t tmpfs: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return func() { exec.Command("umount", "-l", dir).Run() }, nil
}
