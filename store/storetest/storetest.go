// Package storetest is the conformance suite every leaselab storage backend passes: the lease
// protocol as engine.DB and engine.Conn promise it, on a real database, whatever the database
// is. Each backend's tests call Run with a Backend that makes fresh databases; tests of what only
// one backend has (SQLite's query plan, WAL pages and write lock; PostgreSQL's index plan and
// SKIP LOCKED) stay beside that backend. The model is River's riverdriver/riverdrivertest, which
// runs one suite against each of its drivers.
package storetest

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"leaselab/engine"
)

// Backend is one storage backend under test.
type Backend struct {
	// New returns a new, empty leaselab database of its own; the backend closes it (and
	// removes it) in t.Cleanup.
	New func(t *testing.T) engine.DB
	// Exec runs one SQL statement on db outside any worker connection: the suite damages a
	// finished run with it to prove that each safety check can fail. The statements are plain
	// SQL that SQLite and PostgreSQL both take.
	Exec func(t *testing.T, db engine.DB, query string)
}

// t0 is the suite's start of time.
var t0 = engine.Epoch

// Run runs the whole suite against b, one subtest per property.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"CapabilitiesAreWhatConnectionsDo", testCapabilities},
		{"ClaimTakesOldestAndSetsLease", testClaimTakesOldest},
		{"ClaimBoundaryAtExactlyLockedUntil", testClaimBoundary},
		{"KeyedClaimBlockedThenEmpty", testKeyedClaim},
		{"EmptyAndBlockedSayWhy", testEmptyAndBlocked},
		{"FinalizeByStrangerChangesNothing", testFinalizeByStranger},
		{"Fencing", testFencing},
		{"RenewOnlyByOwner", testRenewOnlyByOwner},
		{"RenewAfterReclaim", testRenewAfterReclaim},
		{"CrashAndReclaim", testCrashAndReclaim},
		{"TwoConnectionsRaceOneClaim", testRaceOneClaim},
		{"RacingWorkersFinalizeEachOnce", testRacingWorkers},
		{"NonAtomicClaimLetsBothTake", testNonAtomicBothTake},
		{"NonAtomicTakeAfterAnotherFinalized", testNonAtomicAfterFinalize},
		{"NaiveLoadDoublesTheWork", testNaiveLoadDoubles},
		{"CountsAndDuplicateKeys", testCounts},
		{"ChecksCanFail", testChecksCanFail},
		{"CancelledContextChangesNothing", testCancelled},
		{"ClaimBatchTakesOldestInOrder", testClaimBatchTakesOldestInOrder},
		{"ClaimBatchSkipsLiveLeasesAndReclaimsExpired", testClaimBatchSkipsLiveLeasesAndReclaimsExpired},
		{"ClaimBatchRefusesBadRequests", testClaimBatchRefusesBadRequests},
		{"ClaimBatchRacingConnectionsNeverShare", testClaimBatchRacingConnectionsNeverShare},
		{"FinalizeAndClaimCommitsBoth", testFinalizeAndClaimCommitsBoth},
		{"FinalizeAndClaimByNonOwnerRollsBackFinalize", testFinalizeAndClaimByNonOwnerRollsBackFinalize},
		{"FinalizeAndClaimFencingRejectsStaleVersion", testFinalizeAndClaimFencingRejectsStaleVersion},
		{"FinalizeAndClaimSkipsTheRowItFinalizes", testFinalizeAndClaimSkipsTheRowItFinalizes},
		{"FinalizeAndClaimKeyed", testFinalizeAndClaimKeyed},
		{"FinalizeAndClaimErrorRollsBackBoth", testFinalizeAndClaimErrorRollsBackBoth},
		{"FinalizeAndClaimRacingWorkersFinalizeEachOnce", testFinalizeAndClaimRacingWorkersFinalizeEachOnce},
		{"FinalizeBatchCommitsEach", testFinalizeBatchCommitsEach},
		{"FinalizeBatchRollsBackOnlyTheLostOne", testFinalizeBatchRollsBackOnlyTheLostOne},
		{"FinalizeBatchErrorRollsBackAll", testFinalizeBatchErrorRollsBackAll},
		{"FinalizeBatchMixedGuardsSayWhyEach", testFinalizeBatchMixedGuardsSayWhyEach},
		{"FinalizeBatchRepeatedMessageOnce", testFinalizeBatchRepeatedMessageOnce},
		{"FinalizeBatchResultsInRequestOrder", testFinalizeBatchResultsInRequestOrder},
		{"FailReleasesWithBackoff", testFailReleasesWithBackoff},
		{"FailIsGuarded", testFailIsGuarded},
		{"FailDeadLettersAtMax", testFailDeadLettersAtMax},
		{"RedriveOnlyDeadLetters", testRedriveOnlyDeadLetters},
		{"RescueGuardedAndNot", testRescueGuardedAndNot},
		{"GuardedRescueAfterReclaim", testGuardedRescueAfterReclaim},
		{"HostedWorkersFinalizeEachOnce", testHostedWorkersFinalizeEachOnce},
		{"HostedRejectedFinalizeRollsBackAlone", testHostedRejectedFinalizeRollsBackAlone},
		{"HostedCleanShutdownLeavesNoProcessing", testHostedCleanShutdownLeavesNoProcessing},
		{"HostedHeartbeatKeepsLeases", testHostedHeartbeatKeepsLeases},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, b) })
	}
}

// seeded returns a new database of b with n seeded payments (PAY-001…), as engine.Seed writes
// them through the gateway.
func seeded(t *testing.T, b Backend, n int) engine.DB {
	t.Helper()
	db := b.New(t)
	Seed(t, db, n)
	return db
}

// Seed writes n Pending payments (PAY-001…) into db, as engine.Seed writes them through the
// gateway, created before engine.Epoch; an error fails the test.
func Seed(t testing.TB, db engine.DB, n int) {
	t.Helper()
	if err := engine.Seed(context.Background(), engine.NewGateway(db), n, t0); err != nil {
		t.Fatal(err)
	}
}

// Connect opens a worker connection to db, closed at the end of the test.
func Connect(t *testing.T, db engine.DB) engine.Conn {
	t.Helper()
	c, err := db.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// claimAt is worker's claim of the oldest claimable message at now, with a lease of d.
func claimAt(worker string, now time.Time, d time.Duration) engine.ClaimRequest {
	return engine.ClaimRequest{Worker: worker, Now: now, Until: now.Add(d)}
}

// paid is worker's guarded, fenced finalize of m as Paid at t0.
func paid(worker string, m engine.Message) engine.FinalizeRequest {
	return engine.FinalizeRequest{Worker: worker, Message: m, Now: t0, PaymentStatus: engine.PaymentPaid,
		TransactionID: "txn_" + m.IdempotencyKey, OwnershipCheck: true, Fencing: true}
}

// RowByKey reads key's row as the database holds it now.
func RowByKey(t *testing.T, db engine.DB, key string) engine.Row {
	t.Helper()
	rows, err := db.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.IdempotencyKey == key {
			return r
		}
	}
	t.Fatalf("no row %s", key)
	return engine.Row{}
}

// mustClaim claims and fails the test unless the claim is won.
func mustClaim(t *testing.T, c engine.Conn, req engine.ClaimRequest) engine.ClaimResult {
	t.Helper()
	res, err := c.Claim(context.Background(), req)
	if err != nil || res.Outcome != engine.ClaimWon {
		t.Fatalf("claim by %s at %s: %+v, %v; want won", req.Worker, req.Now.Format("15:04:05.000"), res, err)
	}
	return res
}

// PostgresURL returns the server the PostgreSQL tests use, from LEASELAB_PG. Without it they are
// skipped, saying so, except in CI (CI set), where a missing server fails the test.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("LEASELAB_PG")
	switch {
	case u != "" && !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://"):
		// Not a URL: a test would hand it on as a --db and the CLI would take it for a SQLite
		// file name, leaving files such as "1?schema=…" in the package's folder.
		t.Fatalf("LEASELAB_PG=%q is not a PostgreSQL URL (postgres://…)", u)
	case u != "":
		return u
	case os.Getenv("CI") != "":
		t.Fatal("LEASELAB_PG is not set, and CI is: the PostgreSQL tests must run in CI (.ci/run starts a server)")
	default:
		t.Skip("skipped: LEASELAB_PG is not set (a URL such as postgres://postgres@127.0.0.1:5432/postgres; .ci/run starts a server)")
	}
	return ""
}

// AtOnce runs work(w) for w from 0 to n-1, each on a goroutine of its own, holds them until
// ready (when not nil) has returned, releases them together and returns once all have, with
// each one's error: the workers of a race, or of a benchmark whose clock ready starts.
func AtOnce(n int, ready func(), work func(w int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[w] = work(w)
		}()
	}
	if ready != nil {
		ready()
	}
	close(start)
	wg.Wait()
	return errs
}
