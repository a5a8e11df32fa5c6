package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"
)

func stress(t *testing.T, cfg engine.StressConfig) *engine.StressResult {
	t.Helper()
	ctx := context.Background()
	db, err := store.Create(ctx, filepath.Join(t.TempDir(), "stress.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := engine.Stress(ctx, db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := db.IntegrityCheck(ctx); ok != "ok" || err != nil {
		t.Fatalf("integrity_check %q %v", ok, err)
	}
	return res
}

// A small stress run (it also runs under -race in CI): with leasing and fencing every message
// is finalized exactly once through crashes, pauses and clock jumps; without leasing the
// checker finds the duplicates.
func TestStressSmall(t *testing.T) {
	st := engine.DefaultSettings()
	st.Fencing, st.Lease = true, 200*time.Millisecond
	cfg := engine.StressConfig{Workers: 4, Messages: 300, CrashRate: 0.03, PauseRate: 0.03, JumpRate: 0.03, Seed: 11, Settings: st}
	res := stress(t, cfg)
	if !res.OK() {
		t.Fatalf("with leasing and fencing: %v", res.Problems)
	}
	if res.Crashes == 0 || res.Pauses == 0 || res.ClockJumps == 0 {
		t.Fatalf("no chaos happened: %d crashes, %d pauses, %d jumps", res.Crashes, res.Pauses, res.ClockJumps)
	}
	t.Logf("crashes %d, pauses %d, jumps %d, re-processed %d, rejected %d", res.Crashes, res.Pauses, res.ClockJumps,
		res.Summary.ProcessedMoreThanOnce, res.Summary.RejectedFinalizes)

	cfg.Settings.Leasing = false
	if res := stress(t, cfg); res.OK() || res.FinalizedTwice == 0 {
		t.Fatalf("without leasing the stress checker found nothing: %+v", res)
	}
}
