package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/engine/words"
	"leaselab/store"
)

// loadScenario parses a built-in scenario by name, or text when name is "".
func loadScenario(t testing.TB, name, text string) *engine.Scenario {
	t.Helper()
	data, src := []byte(text), "test.scenario"
	if name != "" {
		var ok bool
		data, src, ok = assets.Scenario(name)
		if !ok {
			t.Fatalf("no built-in scenario %q", name)
		}
	}
	sc, err := scenario.Parse(src, data)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// session opens a fresh database file and a session on it.
func session(t testing.TB, sc *engine.Scenario) *engine.Session { return sessionWith(t, sc, nil) }

// freshDB creates a SQLite database file of that name in the test's temporary folder, closed
// when the test ends.
func freshDB(t testing.TB, name string) *store.DB {
	t.Helper()
	db, err := store.Create(context.Background(), filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sessionWith is session opened with opt (nil: NewSession's options).
func sessionWith(t testing.TB, sc *engine.Scenario, opt *engine.SessionOptions) *engine.Session {
	t.Helper()
	ctx := context.Background()
	db := freshDB(t, "leaselab.db")
	var s *engine.Session
	var err error
	if opt == nil {
		s, err = engine.NewSession(ctx, sc, db)
	} else {
		s, err = engine.NewSessionWith(ctx, sc, db, *opt)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func runToEnd(t testing.TB, sc *engine.Scenario) (*engine.Session, *engine.Summary) {
	t.Helper()
	return runToEndWith(t, sc, nil)
}

// runToEndWith is runToEnd on a session opened with opt (nil: NewSession's options).
func runToEndWith(t testing.TB, sc *engine.Scenario, opt *engine.SessionOptions) (*engine.Session, *engine.Summary) {
	t.Helper()
	s := sessionWith(t, sc, opt)
	return s, runSession(t, s)
}

// runSession runs s's script to the end and summarizes the run.
func runSession(t testing.TB, s *engine.Session) *engine.Summary {
	t.Helper()
	ctx := context.Background()
	if err := s.Script().RunToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

type want struct {
	attempts, checks, dup, unique, paid, failed, pending, processed, violations int
	passed                                                                      bool
}

func checkSummary(t *testing.T, sum *engine.Summary, w want) {
	t.Helper()
	got := want{sum.ProcessingAttempts, sum.StatusChecks, sum.ProcessedMoreThanOnce, sum.UniqueProcessed,
		sum.Payments.Paid, sum.Payments.Failed, sum.Payments.Pending, sum.Outbox.Processed, sum.OwnershipViolations, sum.Passed}
	if got != w {
		t.Fatalf("summary:\n got  %+v\n want %+v", got, w)
	}
	if sum.DuplicateRows != 0 || sum.CreationCalls != sum.Messages {
		t.Fatalf("duplicate rows %d, creation calls %d", sum.DuplicateRows, sum.CreationCalls)
	}
}

// The lesson's BEFORE report: 12 attempts for 6 messages, final rows perfect, verdict failing.
func TestBeforeReproducesTheLesson(t *testing.T) {
	_, sum := runToEnd(t, loadScenario(t, "before", ""))
	checkSummary(t, sum, want{attempts: 12, checks: 12, dup: 6, unique: 6, paid: 4, failed: 2, processed: 6})
	if !sum.ExpectationsMet || sum.Verdict != "THE OUTBOX WAS DURABLE — BUT TWO WORKERS PROCESSED THE SAME WORK ❌" {
		t.Fatalf("expectations met %v, verdict %q", sum.ExpectationsMet, sum.Verdict)
	}
	if sum.LoadedByWorker["Worker-A"] != 6 || sum.LoadedByWorker["Worker-B"] != 6 {
		t.Fatalf("loaded = %v, want 6 and 6", sum.LoadedByWorker)
	}
}

// The lesson's AFTER report, with real goroutines in its concurrent phase: whatever the A/B
// split, 6 attempts, no duplicate, the crashed owner's message recovered once.
func TestAfterReproducesTheLessonEveryTime(t *testing.T) {
	runs := 50
	if testing.Short() {
		runs = 5
	}
	splits := map[string]int{}
	for i := 0; i < runs; i++ {
		_, sum := runToEnd(t, loadScenario(t, "after", ""))
		checkSummary(t, sum, want{attempts: 6, checks: 6, unique: 6, paid: 4, failed: 2, processed: 6, passed: true})
		if len(sum.Recovery) != 1 || !sum.Recovery[0].OK || !sum.Recovery[0].BlockedBeforeExpiry || sum.Recovery[0].ReclaimedBy != "Worker-B" {
			t.Fatalf("run %d: recovery = %+v", i, sum.Recovery)
		}
		if !sum.ExpectationsMet {
			t.Fatalf("run %d: expectations not met: %+v", i, sum.Expectations)
		}
		splits[fmt.Sprintf("%d/%d", sum.ProcessedByWorker["Worker-A"], sum.ProcessedByWorker["Worker-B"])]++
	}
	t.Logf("A/B splits over %d runs: %v", runs, splits)
}

func TestBeforeWithLeasingOnProcessesOnce(t *testing.T) {
	sc := loadScenario(t, "before", "")
	if err := sc.Apply(engine.Overrides{Toggles: map[string]bool{engine.ToggleLeasing: true}}); err != nil {
		t.Fatal(err)
	}
	_, sum := runToEnd(t, sc)
	if sum.ProcessedMoreThanOnce != 0 || sum.ProcessingAttempts != 6 || !sum.ExpectationsMet {
		t.Fatalf("before with leasing: attempts %d, duplicates %d, met %v", sum.ProcessingAttempts, sum.ProcessedMoreThanOnce, sum.ExpectationsMet)
	}
}

// Eight workers, each on its own goroutine and connection, over 500 messages: with leasing no
// message is processed twice; without it the checker must find duplicates.
func TestFreeRunningWorkers(t *testing.T) {
	for _, leasing := range []bool{true, false} {
		t.Run(fmt.Sprintf("leasing=%v", leasing), func(t *testing.T) {
			sc := loadScenario(t, "", fmt.Sprintf("name: free\nmessages: 500\nworkers: 8\nlease: 30s\nleasing: %v\nsteps:\n  concurrent\n", engine.OnOff(leasing)))
			_, sum := runToEndWith(t, sc, &engine.SessionOptions{Seed: true}) // no provider latency: 4,000 calls without leasing
			if sum.UniqueProcessed != 500 || sum.Outbox.Processed != 500 || sum.Lost != 0 {
				t.Fatalf("unique %d, processed %d, lost %d", sum.UniqueProcessed, sum.Outbox.Processed, sum.Lost)
			}
			busy := 0
			for _, n := range sum.ProcessedByWorker {
				if n > 0 {
					busy++
				}
			}
			t.Logf("attempts %d, duplicates %d, workers that did work %d, busy retries %d",
				sum.ProcessingAttempts, sum.ProcessedMoreThanOnce, busy, sum.BusyRetries)
			if leasing {
				if sum.ProcessedMoreThanOnce != 0 || sum.ProcessingAttempts != 500 || sum.OwnershipViolations != 0 || !sum.Passed {
					t.Fatalf("with leasing: %d duplicates, %d attempts, %d violations", sum.ProcessedMoreThanOnce, sum.ProcessingAttempts, sum.OwnershipViolations)
				}
			} else if sum.ProcessedMoreThanOnce == 0 || sum.Passed {
				t.Fatalf("without leasing the checker found no duplicate (attempts %d): it cannot fail", sum.ProcessingAttempts)
			}
		})
	}
}

const seededScenario = `name: seeded
messages: 12
workers: 3
lease: 300ms
seed: %d
steps:
  run random until-done crash-rate=0.05 pause-rate=0.05
`

func reportBody(t *testing.T, seed int64) string {
	t.Helper()
	s, _ := runToEnd(t, loadScenario(t, "", fmt.Sprintf(seededScenario, seed)))
	lines := strings.SplitN(reportText(t, s), "\n", words.HeaderLines+1)
	return lines[len(lines)-1]
}

// reportText is s's text report, its schema "(schema)".
func reportText(t testing.TB, s *engine.Session) string {
	t.Helper()
	rep, err := s.BuildReport(context.Background(), "(schema)", time.Time{}, "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := words.WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The seeded scheduler is deterministic: the same seed gives byte-identical reports, another
// seed another schedule.
func TestSeededSchedulerIsByteIdentical(t *testing.T) {
	a, b := reportBody(t, 7), reportBody(t, 7)
	if a != b {
		t.Fatalf("two runs with seed 7 differ:\n%s\n----\n%s", a, b)
	}
	if c := reportBody(t, 8); c == a {
		t.Fatal("seeds 7 and 8 gave the same report: the seed is not used")
	}
	if !strings.Contains(a, "CRASHED") {
		t.Fatal("crash-rate produced no crash in the seeded run")
	}
}

// A crashed owner's lease is reclaimed after expiry by run until-done, and nothing is lost.
func TestUntilDoneRecoversCrashedLeases(t *testing.T) {
	sc := loadScenario(t, "", "name: t\nmessages: 3\nworkers: A B\nlease: 500ms\nsteps:\n  A claim\n  A crash\n  run until-done\n")
	s, sum := runToEnd(t, sc)
	if sum.Outbox.Processed != 3 || sum.ProcessedMoreThanOnce != 0 || len(sum.Recovery) != 1 || !sum.Recovery[0].OK {
		t.Fatalf("processed %d, duplicates %d, recovery %+v", sum.Outbox.Processed, sum.ProcessedMoreThanOnce, sum.Recovery)
	}
	if got := engine.FormatClock(s.Clock().Now()); got != "09:00:00.501Z" {
		t.Fatalf("clock = %s, want 09:00:00.501Z (1 ms past the lease)", got)
	}
}

func TestScriptErrorsNameTheLine(t *testing.T) {
	sc := loadScenario(t, "", "name: t\nmessages: 1\nworkers: A\nsteps:\n  A crash\n  A check\n")
	s := session(t, sc)
	err := s.Script().RunToEnd(context.Background())
	if err == nil || !strings.Contains(err.Error(), "test.scenario:6:") {
		t.Fatalf("err = %v, want one naming test.scenario:6", err)
	}
}

// Free-running workers can be crashed, paused and restarted while they run, and stop cleanly.
func TestFreeRunSurvivesCrashesAndStops(t *testing.T) {
	sc := loadScenario(t, "", "name: t\nmessages: 200\nworkers: 4\nlease: 200ms\n")
	s := session(t, sc)
	ctx := context.Background()
	f := s.StartFree(ctx, 0, nil)
	for i := 0; i < 20; i++ {
		s.Crew().Crash(i % 4)
		s.Crew().SetPaused((i+1)%4, true)
		s.Crew().AdvanceClock(250 * time.Millisecond)
		s.Crew().Restart(ctx, i%4)
		s.Crew().SetPaused((i+1)%4, false)
		time.Sleep(2 * time.Millisecond)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := s.DB().Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.OutboxProcessed == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("free run stuck at %d processed", c.OutboxProcessed)
		}
		s.Crew().AdvanceClock(250 * time.Millisecond) // let crashed owners' leases expire
		time.Sleep(5 * time.Millisecond)
	}
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.FinalizedMoreThanOnce != 0 || sum.Lost != 0 {
		t.Fatalf("finalized more than once %d, lost %d", sum.FinalizedMoreThanOnce, sum.Lost)
	}
	t.Logf("attempts %d, re-processed %d, violations %d, rejected %d", sum.ProcessingAttempts, sum.ProcessedMoreThanOnce, sum.OwnershipViolations, sum.RejectedFinalizes)
}

// The same worker, restarted, may reclaim the lease its crashed self held: that is recovery too,
// and the message counts as processed once.
func TestRecoveryBySelfAfterRestart(t *testing.T) {
	sc := loadScenario(t, "", "name: t\nmessages: 1\nworkers: A\nlease: 500ms\nsteps:\n  A claim\n  A crash\n  A restart\n  clock past-lease\n  A run\n")
	_, sum := runToEnd(t, sc)
	if len(sum.Recovery) != 1 || !sum.Recovery[0].OK || sum.Recovery[0].ReclaimedBy != "Worker-A" || sum.Recovery[0].ProcessedTimes != 1 {
		t.Fatalf("recovery = %+v", sum.Recovery)
	}
}

// A crash after the provider call: the reclaimer processes the message again (at-least-once);
// the recovery proof counts only processing under the new lease.
func TestRecoveryCountsOnlyTheNewLease(t *testing.T) {
	sc := loadScenario(t, "", "name: t\nmessages: 1\nworkers: A B\nlease: 500ms\nsteps:\n  A claim\n  A check\n  A crash\n  clock past-lease\n  B run\n")
	_, sum := runToEnd(t, sc)
	r := sum.Recovery
	if len(r) != 1 || !r[0].OK || r[0].ProcessedTimes != 1 || sum.ProcessedMoreThanOnce != 1 || sum.FinalizedMoreThanOnce != 0 {
		t.Fatalf("recovery %+v, re-processed %d, finalized twice %d", r, sum.ProcessedMoreThanOnce, sum.FinalizedMoreThanOnce)
	}
}

// A script's claim is the worker's poll under the current settings: a bulk load with leasing
// off, a select and a take with the atomic claim off.
func TestScriptClaimFollowsTheSettings(t *testing.T) {
	for _, c := range []struct {
		flags map[string]bool
		kinds string
	}{
		{map[string]bool{}, "claim"},
		{map[string]bool{engine.ToggleLeasing: false}, "load"},
		{map[string]bool{engine.ToggleAtomicClaim: false}, "select take"},
	} {
		sc := loadScenario(t, "", "name: t\nmessages: 2\nworkers: A\nsteps:\n  A claim\n")
		if err := sc.Apply(engine.Overrides{Toggles: c.flags}); err != nil {
			t.Fatal(err)
		}
		s, _ := runToEnd(t, sc)
		var kinds []string
		for _, e := range s.Ledger().Events() {
			kinds = append(kinds, string(e.Kind))
		}
		if got := strings.Join(kinds, " "); got != c.kinds {
			t.Errorf("%v: events %q, want %q", c.flags, got, c.kinds)
		}
	}
}

// The verdict can name the checks that decide it; the others are shown but do not fail it.
func TestVerdictChecks(t *testing.T) {
	src := "name: t\nmessages: 1\nworkers: A B\nverdict-checks: written-once\nleasing: off\n"
	_, sum := runToEnd(t, loadScenario(t, "", src))
	if sum.Passed {
		t.Fatal("leasing off wrote outcomes twice, yet the verdict passed")
	}
	_, sum = runToEnd(t, loadScenario(t, "", strings.Replace(src, "written-once", "no-duplicate-rows", 1)))
	if !sum.Passed {
		t.Fatal("no-duplicate-rows holds; the verdict should pass")
	}
	for _, c := range sum.Checks {
		if c.Decides != (c.ID == engine.CheckNoDuplicates) {
			t.Fatalf("check %s decides=%v", c.ID, c.Decides)
		}
	}
}

// A toggle switched before any worker acts is the run's own setting: the scenario's
// expectations for it apply, as with the flag. Switched later, the run keeps its start.
func TestToggleBeforeStartIsTheRunsSetting(t *testing.T) {
	s := session(t, loadScenario(t, "before", ""))
	ctx := context.Background()
	if _, err := s.Crew().SetToggle(engine.ToggleLeasing, true); err != nil {
		t.Fatal(err)
	}
	for {
		ok, err := s.Script().Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
	}
	s.Crew().SetToggle(engine.ToggleLeasing, false) // after the run: changes nothing it is judged by
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.ExpectationsMet || sum.Settings[engine.ToggleLeasing] != "on" || sum.ProcessingAttempts != 6 {
		t.Fatalf("met %v, settings %v, attempts %d", sum.ExpectationsMet, sum.Settings, sum.ProcessingAttempts)
	}
}

// The non-atomic claim's take overwrites a row that another worker has already finalized: B takes
// PAY-001 after A has processed and finalized it, and processes it again. The run must report
// that, not stop on an error.
func TestNonAtomicTakeAfterFinalize(t *testing.T) {
	_, sum := runToEnd(t, loadScenario(t, "", `name: naive-late-take
messages: 1
workers: A B
lease: 500ms
leasing: on
atomic-claim: off

steps:
  A step
  B step
  A step
  A step
  A step
  A step
  B step
  run
`))
	if sum.ProcessedMoreThanOnce != 1 || sum.ProcessingAttempts != 2 || sum.Passed {
		t.Fatalf("processed more than once %d, attempts %d, passed %v; want 1, 2, false",
			sum.ProcessedMoreThanOnce, sum.ProcessingAttempts, sum.Passed)
	}
}

// A message reclaimed twice (Worker-A crashes, Worker-B reclaims, checks and crashes, Worker-C
// reclaims and finalizes) is recovered: processed twice after the first reclaim is
// at-least-once, and every safety check holds, so the verdict passes.
func TestReclaimedTwiceIsRecovered(t *testing.T) {
	sc := loadScenario(t, "", "name: twice\nmessages: 1\nworkers: A B C\nlease: 500ms\nsteps:\n"+
		"  A claim PAY-001\n  A crash\n  clock past-lease\n"+
		"  B claim PAY-001\n  B check\n  B crash\n  clock past-lease\n"+
		"  C claim PAY-001\n  C check\n  C finalize\n")
	_, sum := runToEnd(t, sc)
	for _, c := range sum.Checks {
		if !c.OK && c.Decides {
			t.Errorf("check %s failed: %s", c.ID, c.Detail)
		}
	}
	if !sum.Passed || sum.Verdict != engine.DefaultPass || len(sum.Recovery) != 2 {
		t.Fatalf("passed %v, verdict %q, %d recoveries: %+v", sum.Passed, sum.Verdict, len(sum.Recovery), sum.Recovery)
	}
	if r := sum.Recovery[0]; !r.OK || r.ReclaimedBy != "Worker-B" || r.ProcessedTimes != 2 {
		t.Fatalf("first recovery: %+v", r)
	}
}
