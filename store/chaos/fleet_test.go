package chaos

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// restartDelay is how long the supervisor waits before it starts a worker process again after
// it ended, killed or on its own (systemd's RestartSec, a container's restart).
const restartDelay = 300 * time.Millisecond

// worker is one worker process slot of a run, kept running by the fleet's supervisor: when the
// process ends while the run goes on, another is started in its place.
type worker struct {
	i    int
	name string // the process's name: W1, W2, …

	mu      sync.Mutex
	cmd     *exec.Cmd // the process now running; nil between two
	since   time.Time // when cmd started
	stopped bool      // SIGSTOPped now
	skew    time.Duration
	starts  int
}

// fleet runs a run's worker processes under a supervisor.
type fleet struct {
	workers []*worker
	command func(w *worker, skew time.Duration) *exec.Cmd
	onLine  func(w *worker, line string) // every line a process prints (stdout and stderr)
	log     io.Writer                    // every line, prefixed with its process
	logMu   sync.Mutex

	stop chan struct{}
	wg   sync.WaitGroup
}

func newFleet(n int, command func(w *worker, skew time.Duration) *exec.Cmd, onLine func(*worker, string), log io.Writer) *fleet {
	f := &fleet{command: command, onLine: onLine, log: log, stop: make(chan struct{})}
	for i := range n {
		f.workers = append(f.workers, &worker{i: i, name: fmt.Sprintf("W%d", i+1)})
	}
	return f
}

// start starts every worker's supervisor.
func (f *fleet) start() {
	for _, w := range f.workers {
		f.wg.Add(1)
		go f.supervise(w)
	}
}

func (f *fleet) running() bool {
	select {
	case <-f.stop:
		return false
	default:
		return true
	}
}

func (f *fleet) say(w *worker, line string) {
	f.logMu.Lock()
	fmt.Fprintf(f.log, "%s %s | %s\n", time.Now().Format("15:04:05.000"), w.name, line)
	f.logMu.Unlock()
}

// supervise runs w's process, and again restartDelay after it ends, until the fleet stops.
func (f *fleet) supervise(w *worker) {
	defer f.wg.Done()
	for f.running() {
		w.mu.Lock()
		cmd := f.command(w, w.skew)
		w.mu.Unlock()
		out, err := cmd.StdoutPipe()
		if err == nil {
			cmd.Stderr = cmd.Stdout
			err = cmd.Start()
		}
		if err != nil {
			f.say(w, "could not start: "+err.Error())
		} else {
			w.mu.Lock()
			w.cmd, w.stopped, w.since = cmd, false, time.Now()
			w.starts++
			w.mu.Unlock()
			if !f.running() { // shut down while it started: it missed the SIGTERM
				cmd.Process.Signal(syscall.SIGTERM)
			}
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				f.onLine(w, sc.Text())
				f.say(w, sc.Text())
			}
			err := cmd.Wait()
			w.mu.Lock()
			w.cmd = nil
			w.mu.Unlock()
			f.say(w, fmt.Sprintf("ended: %v", err))
		}
		select {
		case <-f.stop:
		case <-time.After(restartDelay):
		}
	}
}

// signal sends sig to w's process now running, and reports whether there was one.
func (w *worker) signal(sig syscall.Signal) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd == nil || w.cmd.Process == nil {
		return false
	}
	if w.cmd.Process.Signal(sig) != nil {
		return false
	}
	switch sig {
	case syscall.SIGSTOP:
		w.stopped = true
	case syscall.SIGCONT:
		w.stopped = false
	}
	return true
}

// signalRunning sends sig to w's process, waiting up to within for one to be running (and to
// have run for 200 ms, long enough to have claimed something).
func (w *worker) signalRunning(sig syscall.Signal, within time.Duration) bool {
	for give := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		w.mu.Lock()
		ready := w.cmd != nil && time.Since(w.since) >= 200*time.Millisecond
		w.mu.Unlock()
		if ready || time.Now().After(give) {
			return w.signal(sig)
		}
	}
}

// setSkew sets the clock offset of w's next process.
func (w *worker) setSkew(d time.Duration) {
	w.mu.Lock()
	w.skew = d
	w.mu.Unlock()
}

// restarts counts the processes started after the first, all workers.
func (f *fleet) restarts() int {
	n := 0
	for _, w := range f.workers {
		w.mu.Lock()
		n += max(w.starts-1, 0)
		w.mu.Unlock()
	}
	return n
}

// shutdown stops the fleet: each process is woken (SIGCONT), asked to stop (SIGTERM), and
// killed if it has not ended within grace.
func (f *fleet) shutdown(grace time.Duration) {
	close(f.stop)
	for _, w := range f.workers {
		w.signal(syscall.SIGCONT)
		w.signal(syscall.SIGTERM)
	}
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	for _, w := range f.workers {
		w.signal(syscall.SIGKILL)
	}
	<-done
}
