package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"
)

// stressDB is a fresh database for one stress run.
func stressDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Create(context.Background(), filepath.Join(t.TempDir(), "stress.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// The timeout covers the seeding, and a run it cuts short is a failed result, not an error: its
// messages not Processed are unfinished, none lost. Today a timeout while seeding was an error
// (exit 3), and a run cut later reported every unfinished message as lost.
func TestStressTimeoutCountsUnfinishedNotLost(t *testing.T) {
	st := engine.DefaultSettings()
	st.Fencing, st.Lease = true, 200*time.Millisecond
	for _, c := range []struct {
		name     string
		messages int
		timeout  time.Duration
	}{
		{"while seeding", 50, time.Nanosecond},
		{"while working", 3000, 1500 * time.Millisecond}, // seeding takes about a second here
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := engine.StressConfig{Workers: 4, Messages: c.messages, CrashRate: 0.02, Seed: 3, Settings: st, Timeout: c.timeout}
			res, err := engine.Stress(context.Background(), stressDB(t), cfg, nil)
			if err != nil {
				t.Fatalf("a timed-out run is a result, not an error: %v", err)
			}
			if !res.TimedOut {
				t.Skipf("the run finished within %s on this machine", c.timeout)
			}
			if res.OK() || res.Lost() != 0 || res.Unfinished == 0 || res.Unfinished != c.messages-res.Summary.Outbox.Processed {
				t.Fatalf("ok %v, lost %d, unfinished %d of %d (processed %d), problems %v", res.OK(), res.Lost(), res.Unfinished,
					c.messages, res.Summary.Outbox.Processed, res.Problems)
			}
			t.Logf("%d processed, %d unfinished: %v", res.Summary.Outbox.Processed, res.Unfinished, res.Problems)
		})
	}
}

// An interrupt (the caller's ctx ends) is not a result: Stress returns an error that wraps the
// context's cause, so that the command can say "interrupted" and drop the unfinished run.
func TestStressInterruptIsAnError(t *testing.T) {
	st := engine.DefaultSettings()
	st.Fencing, st.Lease = true, 200*time.Millisecond
	stop := errors.New("interrupted by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { cancel(stop) })
	cfg := engine.StressConfig{Workers: 4, Messages: 3000, CrashRate: 0.02, Seed: 3, Settings: st}
	res, err := engine.Stress(ctx, stressDB(t), cfg, nil)
	if !errors.Is(err, stop) || res != nil {
		t.Fatalf("interrupted run: result %v, error %v; want no result and an error wrapping the cause", res, err)
	}
}
