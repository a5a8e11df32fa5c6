package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The first SIGINT or SIGTERM sent to the lab or to watch in a real terminal ends it, every
// time, at once. Bubble Tea's own signal handler and RunWithSignals' both took the signal: when
// the context ended the program first, Bubble Tea's handler blocked for ever sending its quit
// to a loop that was gone, and the program's shutdown waited on it until a second signal came
// (lost 2 of 6 times for the lab, 4 of 6 for watch, in tmux). The trials run side by side in
// one tmux server; LEASELAB_SIGNAL_TRIALS sets how many per program and signal (default 3:
// with the old code, about 1 in 3 was lost, so 12 trials all ending has odds near 1 in 130).
func TestFirstSignalEndsTheScreen(t *testing.T) {
	tmux := testTmux(t, "the lab and watch")
	trials := 3
	if n, err := strconv.Atoi(os.Getenv("LEASELAB_SIGNAL_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	db := seeded(t, t.TempDir(), "watched.db", 6)
	tmp := t.TempDir()
	dir := t.TempDir()
	type trial struct {
		name, status, screen string
		sig                  syscall.Signal
		code                 int
		pid                  int
		sent                 time.Time
		took                 time.Duration
	}
	var all []*trial
	progs := []struct{ name, args, screen string }{
		{"the lab (playground)", "--scenario playground", "PAY-0"},
		{"watch --db F", "watch --db " + db, "PAY-0"},
	}
	for _, p := range progs {
		for _, s := range signalCases[:2] { // SIGINT, SIGTERM
			for range trials {
				tr := &trial{name: p.name, screen: p.screen, sig: s.sig, code: s.code, status: filepath.Join(dir, fmt.Sprintf("w%d", len(all)))}
				win := fmt.Sprintf("w%d", len(all))
				cmd := paneCommand(tr.status, tmp, p.args)
				args := []string{"new-window", "-d", "-n", win, cmd}
				if len(all) == 0 {
					args = []string{"new-session", "-d", "-s", "sig", "-n", win, "-x", "120", "-y", "40", cmd}
				}
				if _, err := tmux(args...); err != nil {
					t.Fatalf("tmux: %v", err)
				}
				if len(all) == 0 {
					// Registered once the server runs and after every folder is made, so that it
					// runs before their removal.
					t.Cleanup(func() {
						for _, tr := range all {
							if tr.pid > 0 && !pidGone(tr.pid) {
								syscall.Kill(tr.pid, syscall.SIGKILL)
							}
						}
						tmux("kill-server")
					})
				}
				tmux("set-option", "-t", "sig:"+win, "remain-on-exit", "on")
				all = append(all, tr)
			}
		}
	}
	// Each screen drawn (its first row on it), then its one signal.
	for i, tr := range all {
		win := fmt.Sprintf("sig:w%d", i)
		if !poll(60*time.Second, 20*time.Millisecond, func() bool {
			out, _ := tmux("capture-pane", "-p", "-t", win)
			return strings.Contains(out, tr.screen)
		}) {
			out, _ := tmux("capture-pane", "-p", "-t", win)
			t.Fatalf("%s never drew its screen:\n%s", tr.name, out)
		}
		pid, err := tmux("display-message", "-p", "-t", win, "#{pane_pid}")
		if err != nil {
			t.Fatal(err)
		}
		tr.pid, _ = strconv.Atoi(pid)
	}
	time.Sleep(300 * time.Millisecond) // idle, as in the report: the screen drawn, nothing running
	var wg sync.WaitGroup
	for _, tr := range all {
		tr.sent = time.Now()
		if err := syscall.Kill(tr.pid, tr.sig); err != nil {
			t.Fatalf("kill -%d %d: %v", tr.sig, tr.pid, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The child writes its exit code as it exits: tmux may take seconds to reap it.
			poll(10*time.Second, 5*time.Millisecond, func() bool {
				b, err := os.ReadFile(tr.status)
				if err == nil && len(b) > 0 {
					tr.took = time.Since(tr.sent)
					return true
				}
				return false
			})
		}()
	}
	wg.Wait()
	slowest := map[string]time.Duration{}
	for _, tr := range all {
		b, _ := os.ReadFile(tr.status)
		name := fmt.Sprintf("%s to %s", signalName(tr.sig), tr.name)
		switch {
		case len(b) == 0:
			t.Errorf("%s: still running 10 s after the first signal (pid %d)", name, tr.pid)
		case string(b) != strconv.Itoa(tr.code):
			t.Errorf("%s: exit %s, want %d", name, b, tr.code)
		}
		slowest[name] = max(slowest[name], tr.took)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "leaselab-run-*")); len(left) > 0 {
		t.Errorf("temporary folders left behind: %v", left)
	}
	if t.Failed() {
		return
	}
	for _, p := range progs {
		for _, s := range signalCases[:2] {
			name := fmt.Sprintf("%s to %s", s.name, p.name)
			recordReliability(t, "signals", fmt.Sprintf("the first %s to %s in a terminal (tmux), idle, %d trials", s.name, p.name, trials),
				s.code, fmt.Sprintf("every trial ended on the first signal, the slowest in %s", slowest[name].Round(10*time.Millisecond)), "—")
		}
	}
}
