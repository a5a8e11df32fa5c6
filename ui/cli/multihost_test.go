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
	"testing"
	"time"

	"leaselab/store/postgres"
	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5"
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
	next := (os.Getpid() % 64) * 4 // where to look first: test processes started together start apart
	for range n {
		ns, subnet, why := claimSubnet(t, &next)
		if ns == "" {
			return nil, why
		}
		vh, vn := ns+"h", ns+"n"
		steps := [][]string{
			{"link", "add", vh, "type", "veth", "peer", "name", vn},
			{"link", "set", vn, "netns", ns},
			{"addr", "add", subnet + ".1/24", "dev", vh},
			{"link", "set", vh, "up"},
			{"netns", "exec", ns, "ip", "addr", "add", subnet + ".2/24", "dev", vn},
			{"netns", "exec", ns, "ip", "link", "set", vn, "up"},
			{"netns", "exec", ns, "ip", "link", "set", "lo", "up"},
		}
		t.Cleanup(func() { exec.Command("ip", "link", "del", vh).Run() })
		for _, s := range steps {
			if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
				return nil, fmt.Sprintf("ip %s: %v: %s", strings.Join(s, " "), err, strings.TrimSpace(string(out)))
			}
		}
		hosts = append(hosts, host{ns: ns, addr: subnet + ".1"})
	}
	return hosts, ""
}

// claimSubnet takes a subnet 10.231.S (S from *next on, round the 256) that no other process
// uses, and returns it with the network namespace named after it, made here and deleted at the
// test's end. Making the namespace is the claim: "ip netns add" of a name that exists fails, so
// two test processes (the packages of several go test runs on one machine) never take the same
// S, as they did when S came from the pid alone: two veths on the test's side with one address
// sent the answers of one namespace down the other's veth, and a worker's connection timed out.
// A subnet already on an interface here (a run that did not clean up) is passed over too.
func claimSubnet(t *testing.T, next *int) (ns, subnet, why string) {
	t.Helper()
	for range 256 {
		s := *next % 256
		*next = s + 1
		ns, subnet = fmt.Sprintf("ll231s%d", s), fmt.Sprintf("10.231.%d", s)
		out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "exists") {
				continue // another process's
			}
			return "", "", fmt.Sprintf("ip netns add %s: %v: %s", ns, err, strings.TrimSpace(string(out)))
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		if !subnetInUse(subnet) {
			return ns, subnet, ""
		}
	}
	return "", "", "no free subnet 10.231.S"
}

// subnetInUse reports whether an interface of the test's namespace has an address in subnet.0/24.
func subnetInUse(subnet string) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && strings.HasPrefix(ipn.IP.String(), subnet+".") {
			return true
		}
	}
	return false
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

// rowGate is a transaction of the test's own on the PostgreSQL test server that holds the row
// locks of chosen outbox messages: a claim (SKIP LOCKED) passes over them.
type rowGate struct {
	t      *testing.T
	schema string
	tx     pgx.Tx
}

// lockRows begins a rowGate on the schema of schemaURL (a pgSchemaURL); its connection is closed
// at the end of the test, if release has not ended it before.
func lockRows(t *testing.T, schemaURL string) *rowGate {
	t.Helper()
	u, err := url.Parse(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn := pgConnect(t, ctx, storetest.PostgresURL(t))
	t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &rowGate{t: t, schema: pgx.Identifier{u.Query().Get("schema")}.Sanitize(), tx: tx}
}

// lock takes the row lock of the outbox message key, and keeps it until release.
func (g *rowGate) lock(key string) {
	g.t.Helper()
	var id int64
	err := g.tx.QueryRow(context.Background(), "SELECT Id FROM "+g.schema+".OutboxMessages WHERE IdempotencyKey = $1 FOR UPDATE", key).Scan(&id)
	if err != nil {
		g.t.Fatalf("lock %s: %v", key, err)
	}
}

// release ends the transaction, and with it the locks.
func (g *rowGate) release() {
	g.t.Helper()
	if err := g.tx.Rollback(context.Background()); err != nil {
		g.t.Fatal(err)
	}
}

// startOn starts a leaselab process (this test binary, as TestMain allows) on h.
func startOn(t *testing.T, h host, args ...string) *child {
	t.Helper()
	cmd := leaselab(args...)
	if h.ns != "" {
		cmd = exec.Command("ip", append([]string{"netns", "exec", h.ns, os.Args[0]}, args...)...) // ip execs it: same pid
	}
	return startCmd(t, cmd)
}

// Workers on three hosts share one PostgreSQL schema, one of each host's two a hosted worker
// (--slots 4); two more are killed with SIGKILL while they
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
	seedDB(t, schemaURL, messages)
	dbOn := func(h host) string {
		v, _ := url.Parse(schemaURL)
		v.Host = proxy(t, net.JoinHostPort(h.addr, "0"), u.Host)
		return v.String()
	}
	begin := time.Now()
	common := []string{"worker", "--lease", "1s", "--poll", "10ms", "--pace", "2ms"}
	var victims []*child
	held := map[string]string{} // key -> victim
	// Each victim must hold a message of its own. The first victim's 1 s lease may end before
	// the second has made its claim (its process starting, on a loaded machine, took longer,
	// once in 8 runs): the second then rightly reclaimed the first one's message, and its
	// finalize waited behind the first one's held transaction for the whole 30 s, so that it
	// never said it held one. The test's own transaction holds the row locks of the messages
	// the victims hold until the second victim holds one: its claim (SKIP LOCKED) passes over
	// them, whenever it comes.
	gate := lockRows(t, schemaURL)
	for i, h := range hosts[:2] {
		name := fmt.Sprintf("V%d", i+1)
		v := startOn(t, h, append(common, "--db", dbOn(h), "--name", name, "--hold-finalize", "30s")...)
		victims = append(victims, v)
		key := v.waitMatch(t, regexp.MustCompile(`holding its finalize transaction of (PAY-\d+)`), 30*time.Second)[1]
		if _, twice := held[key]; twice {
			t.Fatalf("both victims hold %s", key)
		}
		held[key] = "Worker-" + name
		gate.lock(key)
	}
	gate.release()
	var workers []*child
	for i, h := range hosts {
		for j := 0; j < 2; j++ {
			args := append(common, "--db", dbOn(h), "--name", fmt.Sprintf("H%dW%d", i+1, j+1))
			if j == 1 { // the second worker of each host is a hosted worker: batch claims and finalizes
				args = append(args, "--slots", "4")
			}
			workers = append(workers, startOn(t, h, args...))
		}
	}
	time.Sleep(50 * time.Millisecond)
	for _, v := range victims {
		v.kill(t)
	}
	for _, w := range workers {
		w.finish(t, 90*time.Second)
	}
	elapsed := time.Since(begin)
	if c := countsAt(t, postgres.Open, schemaURL); c.OutboxProcessed != messages || c.PaymentsPending != 0 || c.DuplicateRows != 0 {
		t.Fatalf("processed %d of %d, payments pending %d, duplicate rows %d", c.OutboxProcessed, messages, c.PaymentsPending, c.DuplicateRows)
	}
	var logs []string
	for _, p := range append(victims, workers...) {
		logs = append(logs, p.output())
	}
	all := strings.Join(logs, "\n")
	for key, victim := range held {
		// A hosted worker's batch claim does not read the lease it replaced: its line shows the
		// new lease version instead, one past the victim's. Nobody but the victim claimed key
		// before it was killed (the gate), so the victim's version is how many times it claimed
		// key: once, unless it lost its lease before its provider call and claimed it again.
		version := 1 + len(regexp.MustCompile(victim+` (re)?claimed `+key+`\b`).FindAllString(all, -1))
		if !regexp.MustCompile(fmt.Sprintf(`Worker-H\dW\d (reclaimed %s from %s|claimed %s, lease until \S+ \(v%d\))`, key, victim, key, version)).MatchString(all) {
			t.Errorf("nobody reclaimed %s from the killed %s", key, victim)
		}
	}
	finalizedOnce(t, all, messages)
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
