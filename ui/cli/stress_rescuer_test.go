package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"leaselab/engine/stress"
)

// stress --rescuer runs a sweeper beside the workers, on SQLite and PostgreSQL. With its guard
// (on by default) every message is finished or dead-lettered, none lost, none finalized twice,
// and --json counts the rescuer's sweeps, rescues and refused rescues; with
// --guarded-rescue=false (the flag comes from the toggle registry) the race of River #1302
// happens for real and the checks catch it: exit 1, a finished message set back to Pending and
// finalized again. Short leases, pauses and frequent clock jumps end leases under working
// workers, so the race has many chances; a second seed is allowed before the race is called
// missed.
func TestStressRescuer(t *testing.T) {
	for backend, db := range retryWhere(t, "leaselab_test_stress_rescuer") {
		for _, guard := range []string{"true", "false"} {
			t.Run(backend+"/guarded-rescue="+guard, func(t *testing.T) {
				for seed := range []int{0, 1} {
					args := []string{"stress", "--json", "--messages", "1000", "--workers", "4", "--lease", "50ms",
						"--fail-rate", "0.3", "--max-attempts", "3", "--crash-rate", "0.01", "--pause-rate", "0.05", "--jump-rate", "0.1",
						"--rescuer", "--rescue-every", "1ms", "--seed", strconv.Itoa(7 + seed), "--timeout", "120s", "--reset", "--db", db()}
					if guard == "false" {
						args = append(args, "--guarded-rescue=false")
					}
					code, out, errs := cli(t, args...)
					var got stress.JSONRuns
					if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Runs) != 1 {
						t.Fatalf("exit %d, %v: %s\n%s", code, err, errs, out)
					}
					r := got.Runs[0]
					res := r.Rescuer
					if res == nil || res.Sweeps == 0 || res.Rescued+res.Refused != res.Seen {
						t.Fatalf("the rescuer did not sweep, or left a lease it read without its UPDATE: %s", out)
					}
					t.Logf("seed %d: %+v; finalized twice %d, dead-lettered %d, lost %d, %v", r.Seed, *res, r.FinalizedTwice, r.DeadLettered, r.Lost, r.Problems)
					if guard == "true" {
						if code != exitOK || !got.OK || r.FinalizedTwice != 0 || r.Lost != 0 || res.RescuedFinished != 0 ||
							r.DeadLettered == 0 || r.Processed+r.DeadLettered != r.Messages || !strings.Contains(got.Settings, "guarded-rescue=on") {
							t.Fatalf("with the guard: exit %d: %s", code, out)
						}
						return
					}
					if code == exitExpect && !got.OK && r.FinalizedTwice > 0 && res.RescuedFinished > 0 {
						return // caught
					}
					if code != exitExpect && code != exitOK {
						t.Fatalf("exit %d: %s\n%s", code, errs, out)
					}
				}
				t.Fatal("without the guard the checks caught no race in two runs")
			})
		}
	}
}
