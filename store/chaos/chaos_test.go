// Package chaos is the chaos harness of issue 29 (test files only, nothing of it in the
// leaselab binary): the same workload, run by leaselab's hosted worker on PostgreSQL and on
// SQLite, by River and by goqite, under the same faults from a seeded schedule, with the losses
// and duplicates counted from ledgers of the harness's own. LEASELAB_CHAOS=1 runs it
// (.ci/chaos.sh); without it the test skips at once.
package chaos

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestMain lets the test binary be a River or goqite worker process (CHAOS_WORKER).
func TestMain(m *testing.M) {
	switch os.Getenv("CHAOS_WORKER") {
	case "river":
		os.Exit(runRiverWorker())
	case "goqite":
		os.Exit(runGoqiteWorker())
	}
	os.Exit(m.Run())
}

// systems in the table's order.
func systems() []system {
	return []system{leaselab{postgres: true}, leaselab{postgres: false}, riverSys{}, goqiteSys{}}
}

// TestChaos runs every fault against every system it applies to and prints the table; with
// LEASELAB_CHAOS_OUT it also writes it, with each system's settings, into that file (Markdown).
// LEASELAB_CHAOS_SEED sets the seed (1); LEASELAB_CHAOS_ONLY, a regular expression, picks the
// runs ("system/fault", e.g. 'River/kill' or 'leaselab'). Every run's seed is the same: a run is
// replayed by its seed and its name.
func TestChaos(t *testing.T) {
	if os.Getenv("LEASELAB_CHAOS") == "" {
		t.Skip("the chaos harness: LEASELAB_CHAOS=1 (.ci/chaos.sh) runs it")
	}
	seed := int64(1)
	if s := os.Getenv("LEASELAB_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("LEASELAB_CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	only := regexp.MustCompile(os.Getenv("LEASELAB_CHAOS_ONLY"))
	h := &harness{dir: t.TempDir()}
	h.bin = buildLeaselab(t, h.dir)
	h.pg = startPG(t)
	h.led = openLedger(t, h.dir)
	h.prov = startProvider(t, h.led, providerLatency)
	tmpfs := filepath.Join(h.dir, "tmpfs")
	if err := os.Mkdir(tmpfs, 0o755); err != nil {
		t.Fatal(err)
	}
	if unmount, err := mountTmpfs(tmpfs, 48<<20); err != nil {
		h.noTmpfs = "no tmpfs to fill: " + err.Error()
		t.Logf("disk-full runs skipped: %s", h.noTmpfs)
	} else {
		h.tmpfs = tmpfs
		t.Cleanup(unmount) // before TempDir's removal: cleanups run last registered first
	}
	if dir := os.Getenv("LEASELAB_CHAOS_KEEP"); dir != "" {
		t.Cleanup(func() { exec.Command("cp", "-r", h.dir, dir).Run() })
	}

	var results []result
	began := time.Now()
	for _, sys := range systems() {
		for _, f := range allFaults {
			name := sys.name() + "/" + string(f)
			if !only.MatchString(name) {
				continue
			}
			ok, why := sys.applies(f, h)
			if !ok {
				results = append(results, result{system: sys.name(), fault: string(f), skipped: why})
				continue
			}
			t.Run(name, func(t *testing.T) {
				res := runOne(t, h, sys, f, seed, len(results))
				results = append(results, res)
				t.Logf("%s: %d/%d completed, %d lost, %d late, %d run more than once, %d stale, %d paid twice; %s",
					name, res.completed, messages, res.lost, res.late, res.again, res.stale, res.twice, res.plan)
				if _, isLeaselab := sys.(leaselab); isLeaselab && (res.lost+res.late > 0 || res.stale > 0 || res.twice > 0 || res.unwitnessed > 0) {
					t.Errorf("leaselab must lose nothing and complete nothing stale or twice: %+v", res)
				}
			})
		}
	}
	var b bytes.Buffer
	writeTable(&b, results)
	fmt.Printf("\nChaos, seed %d, %d messages each, %s:\n\n%s\n", seed, messages, time.Since(began).Round(time.Second), b.String())
	if out := os.Getenv("LEASELAB_CHAOS_OUT"); out != "" {
		var doc bytes.Buffer
		fmt.Fprintf(&doc, "%s\nSettings:\n\n", b.String())
		for _, sys := range systems() {
			fmt.Fprintf(&doc, "- **%s**: %s.\n", sys.name(), sys.settings())
		}
		if err := os.WriteFile(out, doc.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// buildLeaselab builds the leaselab binary from this repository into dir.
func buildLeaselab(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "leaselab")
	cmd := exec.Command("go", "build", "-o", bin, "leaselab")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
