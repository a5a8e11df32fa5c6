package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"leaselab/store/postgres"
	"leaselab/store/storetest"
)

// host is one machine of the multi-host test: a network namespace joined to the test's own by a
// veth pair, or (where namespaces cannot be made) the test's own loopback.
type host struct {
	ns   string // "" for loopback
	addr string // where the workers of this host reach the server (a proxy in the test)
}

// makeHosts makes n network namespaces with a veth pair each (10.231.S.2 inside, 10.231.S.1 on
// the test's side). It returns nil, and why, when it cannot (not root, no ip, no netns).
func makeHosts(t *testing.T, n int) ([]host, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil, "not root"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, "no ip command"
	}
	var hosts []host
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("llh%d_%d", os.Getpid()%100000, i)
		vh, vn := fmt.Sprintf("llv%d%dh", os.Getpid()%100000, i), fmt.Sprintf("llv%d%dn", os.Getpid()%100000, i)
		subnet := fmt.Sprintf("10.231.%d", (os.Getpid()%60)*4+i)
		steps := [][]string{
			{"netns", "add", ns},
			{"link", "add", vh, "type", "veth", "peer", "name", vn},
			{"link", "set", vn, "netns", ns},
			{"addr", "add", subnet + ".1/24", "dev", vh},
			{"link", "set", vh, "up"},
			{"netns", "exec", ns, "ip", "addr", "add", subnet + ".2/24", "dev", vn},
			{"netns", "exec", ns, "ip", "link", "set", vn, "up"},
			{"netns", "exec", ns, "ip", "link", "set", "lo", "up"},
		}
		t.Cleanup(func() {
			exec.Command("ip", "link", "del", vh).Run()
			exec.Command("ip", "netns", "del", ns).Run()
		})
		for _, s := range steps {
			if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
				return nil, fmt.Sprintf("ip %s: %v: %s", strings.Join(s, " "), err, strings.TrimSpace(string(out)))
			}
		}
		hosts = append(hosts, host{ns: ns, addr: subnet + ".1"})
	}
	return hosts, ""
}

// proxy forwards TCP connections from listen to the server at target, in the test's namespace:
// the test server listens on 127.0.0.1 only, and the workers in the namespaces reach it here.
// Its cleanup closes the listener and every connection, and waits for its goroutines.
func proxy(t *testing.T, listen, target string) string {
	t.Helper()
	l, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		conns  = map[net.Conn]bool{}
		closed bool
		wg     sync.WaitGroup
	)
	// track keeps c for the cleanup to close; false (and c closed) once the cleanup has begun.
	track := func(c net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			c.Close()
			return false
		}
		conns[c] = true
		return true
	}
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		closed = true
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			if !track(in) {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer in.Close()
				out, err := net.Dial("tcp", target)
				if err != nil || !track(out) {
					return
				}
				defer out.Close()
				copied := make(chan struct{})
				go func() {
					defer close(copied)
					io.Copy(out, in)
					out.(*net.TCPConn).CloseWrite()
				}()
				io.Copy(in, out)
				in.Close() // the other copy ends too, if the server's side ended first
				<-copied
			}()
		}
	}()
	return l.Addr().String()
}

// startOn starts a leaselab process (this test binary, as TestMain allows) on h.
func startOn(t *testing.T, h host, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	if h.ns != "" {
		cmd = exec.Command("ip", append([]string{"netns", "exec", h.ns, os.Args[0]}, args...)...) // ip execs it: same pid
	}
	return startCmd(t, cmd)
}

// Workers on three hosts share one PostgreSQL schema; two are killed with SIGKILL while they
// hold a lease and an open finalize transaction. Every message is finalized exactly once, the
// killed workers' messages are reclaimed after their leases expire, and no finalize commits over
// another worker's lease.
func TestWorkersOnManyHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and waits for leases to expire")
	}
	pg := storetest.PostgresURL(t)
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	hosts, why := makeHosts(t, 3)
	if hosts == nil {
		t.Logf("network namespaces cannot be made here (%s): the workers run over loopback TCP instead", why)
		hosts = []host{{addr: "127.0.0.1"}, {addr: "127.0.0.1"}, {addr: "127.0.0.1"}}
	}
	schemaURL := pgSchemaURL(t, "leaselab_test_hosts")
	const messages = 60
	if code, _, errOut := cli(t, "seed", "--db", schemaURL, "--messages", fmt.Sprint(messages)); code != exitOK {
		t.Fatalf("seed: exit %d: %s", code, errOut)
	}
	dbOn := func(h host) string {
		v, _ := url.Parse(schemaURL)
		v.Host = proxy(t, net.JoinHostPort(h.addr, "0"), u.Host)
		return v.String()
	}
	begin := time.Now()
	common := []string{"worker", "--lease", "1s", "--poll", "10ms", "--pace", "2ms"}
	var victims []*child
	held := map[string]string{} // key -> victim
	for i, h := range hosts[:2] {
		name := fmt.Sprintf("V%d", i+1)
		v := startOn(t, h, append(common, "--db", dbOn(h), "--name", name, "--hold-finalize", "30s")...)
		victims = append(victims, v)
		key := waitFor(t, v, regexp.MustCompile(`holding its finalize transaction of (PAY-\d+)`))
		held[key] = "Worker-" + name
	}
	var workers []*child
	for i, h := range hosts {
		for j := 0; j < 2; j++ {
			workers = append(workers, startOn(t, h, append(common, "--db", dbOn(h), "--name", fmt.Sprintf("H%dW%d", i+1, j+1))...))
		}
	}
	time.Sleep(50 * time.Millisecond)
	for _, v := range victims {
		if err := v.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case <-v.done:
		case <-time.After(10 * time.Second):
			t.Fatal("a victim did not exit within 10s of SIGKILL")
		}
	}
	for _, w := range workers {
		select {
		case err := <-w.done:
			if err != nil {
				t.Fatalf("worker: %v\n%s", err, w.output())
			}
		case <-time.After(90 * time.Second):
			t.Fatalf("worker did not finish:\n%s", w.output())
		}
	}
	elapsed := time.Since(begin)
	ctx := context.Background()
	db, err := postgres.Open(ctx, schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.OutboxProcessed != messages || c.PaymentsPending != 0 || c.DuplicateRows != 0 {
		t.Fatalf("processed %d of %d, payments pending %d, duplicate rows %d", c.OutboxProcessed, messages, c.PaymentsPending, c.DuplicateRows)
	}
	var logs []string
	for _, p := range append(victims, workers...) {
		logs = append(logs, p.output())
	}
	all := strings.Join(logs, "\n")
	for key, victim := range held {
		if !regexp.MustCompile(`Worker-H\dW\d reclaimed ` + key + ` from ` + victim).MatchString(all) {
			t.Errorf("nobody reclaimed %s from the killed %s", key, victim)
		}
	}
	commits := map[string]int{}
	for _, m := range regexp.MustCompile(`finalized (PAY-\d+): payment`).FindAllStringSubmatch(all, -1) {
		commits[m[1]]++
	}
	for i := 1; i <= messages; i++ {
		if k := fmt.Sprintf("PAY-%03d", i); commits[k] != 1 {
			t.Errorf("%s finalized %d times", k, commits[k])
		}
	}
	if strings.Contains(all, "OWNERSHIP VIOLATION") {
		t.Errorf("ownership violation")
	}
	if t.Failed() {
		t.Fatalf("logs:\n%s", all)
	}
	perHost := make([]int, len(hosts))
	for i, w := range workers {
		perHost[i/2] += strings.Count(w.output(), ": payment")
	}
	t.Logf("%d hosts (namespaces: %v), %d worker processes + 2 killed with SIGKILL holding a lease; %d messages finalized once each, %d reclaimed from the killed, finalized per host %v, in %s",
		len(hosts), hosts[0].ns != "", len(workers), messages, len(held), perHost, elapsed.Round(time.Millisecond))
}

// waitFor waits for a line of c that matches re and returns its first group.
func waitFor(t *testing.T, c *child, re *regexp.Regexp) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line := <-c.seen:
			if m := re.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		case err := <-c.done:
			t.Fatalf("process exited early: %v\n%s", err, c.output())
		case <-timeout:
			t.Fatalf("no line matching %s:\n%s", re, c.output())
		}
	}
}
