package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"leaselab/store"
)

// TestMain lets the test binary act as leaselab itself, so that tests can start real worker
// processes without building anything.
func TestMain(m *testing.M) {
	if os.Getenv("LEASELAB_TEST_CHILD") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// child is a leaselab process started by a test, with its output collected line by line.
type child struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	seen  chan string // every line, for waiting on one
	done  chan error
}

func start(t *testing.T, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LEASELAB_TEST_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	c := &child{cmd: cmd, seen: make(chan string, 10000), done: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			c.lines = append(c.lines, sc.Text())
			c.mu.Unlock()
			select {
			case c.seen <- sc.Text():
			default:
			}
		}
		c.done <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return c
}

func (c *child) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}

// Three worker processes share one database file; one is killed with SIGKILL while it holds a
// finalize transaction open. The database stays sound, its lease is reclaimed after expiry by
// another process, and every message is finalized exactly once.
func TestWorkerProcessesSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and waits for a lease to expire")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "shared.db")
	const messages = 30
	if code, _, stderr := cli(t, "seed", "--db", path, "--messages", fmt.Sprint(messages)); code != 0 {
		t.Fatalf("seed: %d %s", code, stderr)
	}
	common := []string{"worker", "--db", path, "--lease", "1s", "--poll", "10ms", "--pace", "2ms"}
	victim := start(t, append(common, "--name", "P2", "--hold-finalize", "30s")...)
	var held string
	timeout := time.After(30 * time.Second)
	for held == "" {
		select {
		case line := <-victim.seen:
			if m := regexp.MustCompile(`holding its finalize transaction of (PAY-\d+)`).FindStringSubmatch(line); m != nil {
				held = m[1]
			}
		case err := <-victim.done:
			t.Fatalf("victim exited early: %v\n%s", err, victim.output())
		case <-timeout:
			t.Fatalf("victim never held a finalize transaction:\n%s", victim.output())
		}
	}
	p1 := start(t, append(common, "--name", "P1")...)
	p3 := start(t, append(common, "--name", "P3")...)
	time.Sleep(50 * time.Millisecond) // let them queue behind the victim's write lock
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	for _, c := range []*child{p1, p3} {
		select {
		case err := <-c.done:
			if err != nil {
				t.Fatalf("worker: %v\n%s", err, c.output())
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("worker did not finish:\n%s", c.output())
		}
	}
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if ok, err := db.IntegrityCheck(ctx); ok != "ok" || err != nil {
		t.Fatalf("integrity_check = %q %v", ok, err)
	}
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.OutboxProcessed != messages || c.PaymentsPending != 0 {
		t.Fatalf("processed %d of %d, payments pending %d", c.OutboxProcessed, messages, c.PaymentsPending)
	}
	logs := victim.output() + "\n" + p1.output() + "\n" + p3.output()
	if !regexp.MustCompile(`Worker-P[13] reclaimed ` + held + ` from Worker-P2`).MatchString(logs) {
		t.Fatalf("nobody reclaimed %s from the killed Worker-P2:\n%s", held, logs)
	}
	commits := map[string]int{}
	for _, m := range regexp.MustCompile(`finalized (PAY-\d+): payment`).FindAllStringSubmatch(logs, -1) {
		commits[m[1]]++
	}
	for i := 1; i <= messages; i++ {
		if k := fmt.Sprintf("PAY-%03d", i); commits[k] != 1 {
			t.Errorf("%s finalized %d times", k, commits[k])
		}
	}
	if strings.Contains(logs, "OWNERSHIP VIOLATION") {
		t.Fatalf("ownership violation:\n%s", logs)
	}
}
