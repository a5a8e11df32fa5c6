package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/engine/words"
)

// A run that keeps acting without finishing anything is ended by the watchdog, after a bounded
// number of actions, with ErrNoProgress; its ledgers still count what it did.
func TestWatchdogEndsALivelock(t *testing.T) {
	// Worker-A's provider call takes a day; its heartbeat renews a 2ms lease every 1ms, so a
	// run until-done renews for ever and never finalizes.
	sc := loadScenario(t, "", "name: hb\nmessages: 1\nworkers: A\nlease: 2ms\nheartbeat: on\nheartbeat-every: 1ms\nslow: A 24h\nsteps:\n  run until-done\n")
	s := session(t, sc)
	ctx := context.Background()
	err := s.Script().RunToEnd(ctx)
	if !errors.Is(err, engine.ErrNoProgress) || !strings.Contains(err.Error(), "test.scenario:9:") {
		t.Fatalf("RunToEnd = %v, want ErrNoProgress at line 9", err)
	}
	// The watchdog counts the run's turns (an action, or the clock moving to the next timer):
	// 10,000 turns without a finalize.
	if n := s.Crew().Actions(); n < 4_000 || n > 10_000 {
		t.Errorf("%d actions before the watchdog, want at most 10,000", n)
	}
	tot := s.Ledger().Total()
	if tot.Renewals < 4_000 || tot.ClaimsWon != 1 || tot.Finalized != 0 {
		t.Errorf("ledger %+v", tot)
	}
	if got := s.Ledger().EventCount(); got > engine.MaxEventsKept && len(s.Ledger().Events()) != engine.MaxEventsKept {
		t.Errorf("%d events, %d kept", got, len(s.Ledger().Events()))
	}
}

// A run of more events than the log keeps still counts every message from the ledgers, and
// its report says where events were left out.
func TestLongRunCountsFromLedgers(t *testing.T) {
	if testing.Short() {
		t.Skip("7,000 messages")
	}
	const n = 7000
	sc := loadScenario(t, "", "name: long\nmessages: 7000\nworkers: 2\n")
	s, sum := runToEnd(t, sc)
	led := s.Ledger()
	if led.EventCount() <= engine.MaxEventsKept || len(led.Events()) != engine.MaxEventsKept ||
		led.EventsDropped() != led.EventCount()-engine.MaxEventsKept {
		t.Fatalf("%d events, %d kept, %d dropped", led.EventCount(), len(led.Events()), led.EventsDropped())
	}
	if sum.ProcessingAttempts != n || sum.UniqueProcessed != n || sum.ClaimsWon != n || sum.Outbox.Processed != n ||
		sum.StatusChecks != n || sum.Lost != 0 || !sum.Passed {
		t.Errorf("summary: attempts %d unique %d claims %d processed %d checks %d lost %d passed %v",
			sum.ProcessingAttempts, sum.UniqueProcessed, sum.ClaimsWon, sum.Outbox.Processed, sum.StatusChecks, sum.Lost, sum.Passed)
	}
	rep, err := s.BuildReport(context.Background(), "", time.Now(), "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := words.WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "events not kept here (every count below is from the ledgers") {
		t.Error("report timeline does not mark the events it left out")
	}
}

// The lease-expiry proof kept as the events arrive is the one read from the whole event log.
func TestRecoveryRecordsMatchTheEventLog(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		sc := loadScenario(t, "many-workers", "")
		sc.Seed = seed
		s, sum := runToEnd(t, sc)
		events := s.Ledger().Events()
		if s.Ledger().EventsDropped() != 0 {
			t.Fatalf("seed %d: events dropped; the reference needs them all", seed)
		}
		want := referenceRecoveries(events, s.Ledger().Attempts())
		if got := s.Ledger().Recoveries(); !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d: recovery\n got  %+v\n want %+v", seed, got, want)
		}
		// The summary lists the first few and counts them all.
		ok, again := 0, 0
		for _, r := range want {
			if r.OK {
				ok++
			}
			if r.ProcessedTimes > 1 {
				again++
			}
		}
		if first := want[:min(len(want), engine.MaxExamples)]; !reflect.DeepEqual(sum.Recovery, first) ||
			sum.CrashedOwners != len(want) || sum.Recovered != ok || sum.ProcessedAgainAfterReclaim != again {
			t.Errorf("seed %d: summary recovery %+v (%d, %d recovered, %d again), want the first %d of %d (%d, %d)",
				seed, sum.Recovery, sum.CrashedOwners, sum.Recovered, sum.ProcessedAgainAfterReclaim, engine.MaxExamples, len(want), ok, again)
		}
		if len(want) == 0 {
			t.Errorf("seed %d: no crash held a lease; the test proves nothing", seed)
		}
	}
}

// referenceRecoveries is the lease-expiry proof as it was computed from the whole event log.
func referenceRecoveries(events []engine.Event, attempts map[string][]engine.Attempt) []engine.Recovery {
	out := []engine.Recovery{}
	for i, e := range events {
		if e.Kind != engine.EvCrash || e.Key == "" {
			continue
		}
		r := engine.Recovery{Key: e.Key, CrashedOwner: e.Worker, CrashedAt: engine.FormatClock(e.At)}
		var until time.Time
		for _, f := range events[:i] {
			if f.Key == e.Key && f.Worker == e.Worker && f.SetsLease() {
				until = f.Until
			}
		}
		r.LeaseUntil = engine.FormatClock(until)
		var reclaimVersion int64
		restarted := false
		for _, f := range events[i+1:] {
			if f.Kind == engine.EvRestart && f.Worker == e.Worker {
				restarted = true
			}
			if f.Key != e.Key || (f.Worker == e.Worker && !restarted) {
				continue
			}
			if f.BlockedByLease() && r.ReclaimedBy == "" {
				r.BlockedBeforeExpiry = true
			}
			if f.TakesOver() {
				r.ReclaimedBy, r.ReclaimedAt, reclaimVersion = f.Worker, engine.FormatClock(f.At), f.Version
				r.ReclaimedAfterExpiry = !until.IsZero() && f.At.After(until)
				break
			}
		}
		for _, a := range attempts[e.Key] {
			if reclaimVersion > 0 && a.Version >= reclaimVersion {
				r.ProcessedTimes++
			}
		}
		r.OK = r.ReclaimedBy != "" && r.ReclaimedAfterExpiry && r.ProcessedTimes >= 1
		out = append(out, r)
	}
	return out
}

// A lease set at run time follows the same range, and the heartbeat rule only binds when on.
func TestSetLeaseAtRunTime(t *testing.T) {
	s := session(t, loadScenario(t, "", "name: x\n"))
	if _, err := s.Crew().SetDuration("lease", time.Millisecond); err != nil {
		t.Errorf("set lease 1ms with the heartbeat off: %v", err)
	}
	if _, err := s.Crew().SetToggle(engine.ToggleHeartbeat, true); !errors.Is(err, engine.ErrNotNow) {
		t.Errorf("heartbeat on a 1ms lease: %v, want a refusal", err)
	}
	if _, err := s.Crew().SetDuration("lease", 25*time.Hour); err == nil {
		t.Error("set lease 25h accepted")
	}
	if _, err := s.Crew().SetDuration("lease", 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Crew().SetToggle(engine.ToggleHeartbeat, true); err != nil || s.Settings().HeartbeatEvery >= 10*time.Millisecond {
		t.Errorf("heartbeat on a 10ms lease: %v, every %s", err, s.Settings().HeartbeatEvery)
	}
}

// referenceRepeats is the classification of repeated processing as it was computed at the end
// of a run from the whole event log: the lease spans per key and version (a renewal extends the
// lease its worker last took), the violations, the attempts and the committed finalizes.
func referenceRepeats(events []engine.Event, attempts map[string][]engine.Attempt, commits map[string]int) engine.Repeats {
	type span struct{ at, until time.Time }
	leases := map[string]map[int64]*span{}
	held := map[[2]string]int64{}
	violated := map[string]bool{}
	for _, e := range events {
		switch {
		case e.Kind == engine.EvFinalize && e.Outcome == engine.OutcomeViolation:
			violated[e.Key] = true
		case e.Kind == engine.EvRenew && e.Outcome == engine.OutcomeRenewed:
			if sp := leases[e.Key][held[[2]string{e.Key, e.Worker}]]; sp != nil && e.Until.After(sp.until) {
				sp.until = e.Until
			}
		case e.SetsLease() && e.Version > 0:
			if leases[e.Key] == nil {
				leases[e.Key] = map[int64]*span{}
			}
			leases[e.Key][e.Version] = &span{e.At, e.Until}
			held[[2]string{e.Key, e.Worker}] = e.Version
		}
	}
	overlapping := func(as []engine.Attempt, ls map[int64]*span) bool {
		for i, a := range as {
			if a.Version == 0 || ls[a.Version] == nil {
				return true
			}
			for _, b := range as[:i] {
				x, y := ls[a.Version], ls[b.Version]
				if b.Version == a.Version || (!x.at.After(y.until) && !y.at.After(x.until)) {
					return true
				}
			}
		}
		return false
	}
	var r engine.Repeats
	for key, as := range attempts {
		if len(as) < 2 {
			continue
		}
		if commits[key] > 1 || violated[key] || overlapping(as, leases[key]) {
			r.TwoOwners++
		} else {
			r.AfterLostLease++
			r.AgainKeys = append(r.AgainKeys, key)
		}
	}
	slices.Sort(r.AgainKeys)
	return r
}

// The ledger classifies repeated processing as it goes, from what it keeps of each message, and
// gives what the whole event log gives: the same counts and the same keys, for runs with
// heartbeats, crashes, non-atomic claims, violations and fencing.
func TestRepeatsMatchTheEventLog(t *testing.T) {
	for _, c := range []struct {
		name string
		o    engine.Overrides
		seed int64
	}{
		{"lease-too-short", engine.Overrides{}, 0},
		{"lease-too-short", engine.Overrides{Toggles: map[string]bool{engine.ToggleHeartbeat: false}}, 0},
		{"many-workers", engine.Overrides{}, 1},
		{"many-workers", engine.Overrides{}, 2},
		{"many-workers", engine.Overrides{Toggles: map[string]bool{engine.ToggleLeasing: false}}, 3},
		{"naive-claim", engine.Overrides{Toggles: map[string]bool{engine.ToggleAtomicClaim: false, engine.ToggleOwnershipCheck: false}}, 0},
		{"aba-fencing", engine.Overrides{}, 0},
	} {
		sc := loadScenario(t, c.name, "")
		if err := sc.Apply(c.o); err != nil {
			t.Fatal(err)
		}
		if c.seed != 0 {
			sc.Seed = c.seed
		}
		s, sum := runToEnd(t, sc)
		if s.Ledger().EventsDropped() != 0 {
			t.Fatalf("%s: events dropped; the reference needs them all", c.name)
		}
		want := referenceRepeats(s.Ledger().Events(), s.Ledger().Attempts(), s.Ledger().Commits())
		got := engine.Repeats{AfterLostLease: sum.ReprocessedAfterLostLease, TwoOwners: sum.ProcessedByTwoOwners, AgainKeys: sum.ReprocessedKeys}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %v seed %d: the ledger gives %+v, the event log %+v", c.name, c.o, c.seed, got, want)
		}
		var js struct {
			Keys []string `json:"reprocessed_keys"`
		}
		if b, err := json.Marshal(sum); err != nil || json.Unmarshal(b, &js) != nil {
			t.Fatal(err)
		}
		if first := want.AgainKeys[:min(len(want.AgainKeys), engine.MaxExamples)]; !slices.Equal(js.Keys, first) {
			t.Errorf("%s: JSON keys %v, want %v", c.name, js.Keys, first)
		}
	}
}

func renewals(events []engine.Event) int {
	n := 0
	for _, e := range events {
		if e.Kind == engine.EvRenew {
			n++
		}
	}
	return n
}
