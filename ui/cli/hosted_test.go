package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"leaselab/engine"
)

// onEachBackend runs test, a hosted worker's process test, on a file and (when the tests have a
// server) on a PostgreSQL schema, each seeded with messages; common are the worker's flags
// there: --db and the given ones. Skipped with -short: it starts processes.
func onEachBackend(t *testing.T, messages int, flags []string, test func(t *testing.T, name, db string, common []string)) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for name, mk := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "hosted.db") },
		"postgres": func(t *testing.T) string { return pgSchemaURL(t, "hosted") },
	} {
		t.Run(name, func(t *testing.T) {
			db := mk(t)
			seedDB(t, db, messages)
			test(t, name, db, append([]string{"worker", "--db", db}, flags...))
		})
	}
}

// countsOf reads db's counts as a worker process would open it.
func countsOf(t *testing.T, db string) engine.Counts {
	t.Helper()
	return countsAt(t, func(ctx context.Context, where string) (engine.Backend, error) {
		return openShared(ctx, backends(), where)
	}, db)
}

// A hosted worker stopped by SIGTERM while it holds messages finishes the calls under way,
// releases the rest and exits at once (143), long before its 30 s lease ends: no row is left
// Processing, and a second hosted worker finishes every message, each finalized once.
func TestHostedWorkerSIGTERMReleasesItsLeases(t *testing.T) {
	const messages = 60
	onEachBackend(t, messages, []string{"--slots", "6", "--lease", "30s", "--poll", "5ms"}, func(t *testing.T, name, db string, common []string) {
		first := start(t, append(common, "--name", "H1", "--pace", "150ms")...)
		first.waitLine(t, "fetched", 30*time.Second)
		first.waitLine(t, "completer:", 30*time.Second)
		began := time.Now()
		if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := first.exitCode(t, 10*time.Second); code != 143 {
			t.Fatalf("exit %d after SIGTERM, want 143:\n%s", code, first.output())
		}
		if took := time.Since(began); took > 10*time.Second {
			t.Errorf("exited %s after SIGTERM: it waited for something", took)
		}
		c := countsOf(t, db)
		if c.OutboxProcessing != 0 || c.OutboxProcessed+c.OutboxPending != messages {
			t.Fatalf("after SIGTERM: %+v; want no row Processing\n%s", c, first.output())
		}
		if !regexp.MustCompile(`stopping: no more fetches`).MatchString(first.output()) {
			t.Errorf("no stopping line:\n%s", first.output())
		}
		second := start(t, append(common, "--name", "H2")...)
		second.finish(t, 60*time.Second)
		if c := countsOf(t, db); c.OutboxProcessed != messages || c.PaymentsPending != 0 || c.DuplicateRows != 0 {
			t.Fatalf("after the second worker: %+v", c)
		}
		finalizedOnce(t, first.output()+"\n"+second.output(), messages)
		t.Logf("%s: SIGTERM to exit %s; %d finalized by the first, none left Processing", name, time.Since(began).Round(time.Millisecond), c.OutboxProcessed)
	})
}

// A hosted worker killed with SIGKILL while it holds messages leaves their rows Processing
// under its leases; a second hosted worker reclaims them once the leases expire, and every
// message is finalized exactly once.
func TestHostedWorkerSIGKILLLeasesExpire(t *testing.T) {
	const messages = 40
	onEachBackend(t, messages, []string{"--slots", "4", "--lease", "1s", "--poll", "5ms"}, func(t *testing.T, name, db string, common []string) {
		victim := start(t, append(common, "--name", "K1", "--pace", "500ms")...)
		victim.waitLine(t, "fetched 4", 30*time.Second)
		victim.kill(t)
		c := countsOf(t, db)
		if c.OutboxProcessing == 0 {
			t.Fatalf("after SIGKILL: %+v; want the victim's rows still Processing\n%s", c, victim.output())
		}
		held := c.OutboxProcessing
		rescuer := start(t, append(common, "--name", "K2")...)
		rescuer.finish(t, 60*time.Second)
		if c := countsOf(t, db); c.OutboxProcessed != messages || c.OutboxProcessing != 0 || c.PaymentsPending != 0 {
			t.Fatalf("after the second worker: %+v", c)
		}
		logs := victim.output() + "\n" + rescuer.output()
		reclaims := len(regexp.MustCompile(`Worker-K2 claimed PAY-\d+, lease until \S+ \(v2\)`).FindAllString(logs, -1))
		if reclaims < held {
			t.Errorf("%d messages reclaimed after expiry (v2), want at least the %d the victim held:\n%s", reclaims, held, logs)
		}
		finalizedOnce(t, logs, messages)
		t.Logf("%s: SIGKILL left %d rows Processing; %d reclaimed after the lease, %d finalized once each", name, held, reclaims, messages)
	})
}

// stress --slots refuses what hosted workers do not obey (a fault rate, a guard's toggle) rather
// than print it in the header, and a failed hosted run's reproduce line names --slots and none of
// the rate flags that --slots refuses: pasted back, it runs.
func TestStressSlotsFlags(t *testing.T) {
	for _, bad := range [][]string{{"--leasing=false"}, {"--fencing=false"}, {"--heartbeat"}, {"--fail-rate", "0.1"}, {"--skew", "B=+400ms"}} {
		code, _, errs := cli(t, append([]string{"stress", "--slots", "4", "--messages", "10"}, bad...)...)
		flag := strings.SplitN(strings.TrimPrefix(bad[0], "--"), "=", 2)[0]
		if code != exitUsage || !strings.Contains(errs, "--"+flag+": hosted workers (--slots)") {
			t.Errorf("stress --slots %v: exit %d, %q; want 2 naming --%s", bad, code, errs, flag)
		}
	}
	// --json counts what the hosted workers did.
	code, out, errs := cli(t, "stress", "--slots", "4", "--workers", "2", "--messages", "100", "--json")
	var runs struct {
		Runs []struct {
			Hosted *struct{ Fetches, Claimed, Finalized int }
		}
	}
	if err := json.Unmarshal([]byte(out), &runs); code != exitOK || err != nil || len(runs.Runs) != 1 || runs.Runs[0].Hosted == nil {
		t.Fatalf("--json: exit %d, %v: %s\n%s", code, err, errs, out)
	}
	if h := runs.Runs[0].Hosted; h.Claimed != 100 || h.Finalized != 100 || h.Fetches == 0 || h.Fetches >= h.Claimed {
		t.Errorf("--json hosted %+v: want 100 claimed by fetches of several, 100 finalized", *h)
	}
	// Cut by its timeout while seeding, the run fails: its line is the one to paste back.
	code, out, errs = cli(t, "stress", "--slots", "4", "--workers", "2", "--messages", "200000", "--timeout", "50ms")
	if code != exitExpect {
		t.Fatalf("exit %d, want 1: %s\n%s", code, errs, out)
	}
	line := regexp.MustCompile(`reproduce: leaselab (stress .*)`).FindStringSubmatch(out)
	if line == nil || !strings.Contains(line[1], "--slots 4 ") || strings.Contains(line[1], "-rate") {
		t.Fatalf("reproduce line %q: want --slots 4 and no rate flag\n%s", line, out)
	}
	if code, _, errs := cli(t, strings.Fields(line[1])...); code == exitUsage {
		t.Fatalf("the reproduce line is refused: %s", errs)
	}
}
