package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// growthScenario is the file of the hostile run that did not finish in 590 s at 100,000
// messages: a worker an hour ahead (it sees every backoff over, every other lease ended), a
// provider that fails 30% of calls, backoff, provider fencing and a rescuer.
const growthScenario = `name: growth
messages: %d
workers: 2
lease: 500ms
skew: B +1h
provider-fencing: on
fail-rate: 0.3
backoff: on
max-attempts: 3
rescuer: R every 100ms
`

// processCPU is the CPU this process has used: the run is in it (cli.Main, and SQLite in Go).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A run's time is bounded by its file's size: the CPU per message of the growth file at
// LEASELAB_GROWTH messages (100000 for the hostile run's size) is within 1.5× of that at 5,000,
// measured side by side. A due claim read every due row, and a claim that found nothing every
// unfinished row: 1,000 → 4,000 messages cost 2.9 → 15.0 s of CPU, and 100,000 did not finish in
// 590 s. Behind LEASELAB_GROWTH (100,000 messages take minutes); the store's
// TestDueClaimsDoNotReadTheBacklog holds the claim's part on every go test.
func TestRunTimeBoundedByTheFile(t *testing.T) {
	big, err := strconv.Atoi(os.Getenv("LEASELAB_GROWTH"))
	if err != nil || big <= 5000 {
		t.Skip("LEASELAB_GROWTH=100000 runs the growth file at 5,000 and 100,000 messages")
	}
	perMessage := func(n int) time.Duration {
		path := filepath.Join(t.TempDir(), "growth.scenario")
		if err := os.WriteFile(path, []byte(fmt.Sprintf(growthScenario, n)), 0o600); err != nil {
			t.Fatal(err)
		}
		start, wall := processCPU(), time.Now()
		code, out, stderr := cli(t, "run", path, "--report-dir", "")
		cpu := processCPU() - start
		t.Logf("%d messages: exit %d, %s of CPU (%s per message), %s wall; %s", n, code, cpu.Round(time.Millisecond),
			(cpu / time.Duration(n)).Round(time.Microsecond), time.Since(wall).Round(time.Millisecond), firstLine(stderr))
		if !strings.Contains(out, "LEASELAB RUN REPORT") || strings.Contains(out, "DID NOT FINISH") {
			t.Fatalf("%d messages: no report, or the run did not finish:\n%s", n, tail(out, 2000))
		}
		return cpu / time.Duration(n)
	}
	small, large := perMessage(5000), perMessage(big)
	ratio := float64(large) / float64(small)
	if ratio > 1.5 {
		t.Errorf("CPU per message ×%.2f from 5,000 to %d messages (%s, %s): the run grows faster than its file", ratio, big, small, large)
	}
	if !t.Failed() {
		recordReliability(t, "scenario input", fmt.Sprintf("the growth file (skew: B +1h, fail-rate: 0.3, backoff, provider fencing, rescuer) at 5,000 and %d messages", big),
			exitExpect, fmt.Sprintf("%s and %s of CPU per message (×%.2f): linear", small.Round(time.Microsecond), large.Round(time.Microsecond), ratio), "—")
	}
}
