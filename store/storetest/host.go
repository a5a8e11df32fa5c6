package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"leaselab/engine"
)

// paidBy is a provider that answers Paid at once, with a transaction id of the key.
func paidBy(_ context.Context, m engine.Message) (engine.ProviderResult, error) {
	return engine.ProviderResult{Status: engine.PaymentPaid, TransactionID: "txn_" + m.IdempotencyKey}, nil
}

// hostOptions are the suite's hosted worker: name, slots, a lease long enough not to expire in
// a test, and the immediate provider.
func hostOptions(name string, slots int) engine.HostOptions {
	return engine.HostOptions{Name: name, Slots: slots, Lease: 5 * time.Second, Poll: time.Millisecond, Process: paidBy}
}

// finalizedBy counts, from OnEvent, the committed finalizes of each key.
type finalizedBy struct {
	mu   sync.Mutex
	keys map[string]int
}

func (f *finalizedBy) event(e engine.Event) {
	if e.Kind == engine.EvFinalize && e.Outcome == engine.OutcomeCommitted {
		f.mu.Lock()
		f.keys[e.Key]++
		f.mu.Unlock()
	}
}

// Three hosted workers of four slots each share 90 messages: each is finalized exactly once,
// with its payment, none is lost, and no row is left Processing.
func testHostedWorkersFinalizeEachOnce(t *testing.T, b Backend) {
	const hosts, slots, msgs = 3, 4, 90
	db := seeded(t, b, msgs)
	f := &finalizedBy{keys: map[string]int{}}
	var wg sync.WaitGroup
	stats := make([]engine.HostStats, hosts)
	errs := make([]error, hosts)
	for i := range hosts {
		opt := hostOptions(fmt.Sprintf("Host-%d", i+1), slots)
		opt.UntilEmpty, opt.OnEvent = true, f.event
		wg.Add(1)
		go func() { defer wg.Done(); stats[i], errs[i] = engine.RunHost(context.Background(), db, opt) }()
	}
	wg.Wait()
	fetched := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("host %d: %v", i+1, err)
		}
		fetched += stats[i].Fetches
		if stats[i].MaxBatch > 2*slots { // BatchMax's default
			t.Errorf("host %d finalized %d in one batch, more than twice its %d slots", i+1, stats[i].MaxBatch, slots)
		}
	}
	for n := 1; n <= msgs; n++ {
		if k := fmt.Sprintf("PAY-%03d", n); f.keys[k] != 1 {
			t.Errorf("%s finalized %d times", k, f.keys[k])
		}
	}
	c, err := db.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.OutboxProcessed != msgs || c.OutboxProcessing != 0 || c.PaymentsPaid != msgs || c.PaidWithTxID != msgs || c.DuplicateRows != 0 {
		t.Fatalf("counts %+v; want %d processed and paid, none Processing", c, msgs)
	}
	if fetched >= msgs {
		t.Errorf("%d fetches for %d messages: the fetcher never claimed several at once", fetched, msgs)
	}
}

// A hosted worker finalizes three messages in one batch; another owner took the second
// meanwhile (its lease version moved on). That finalize alone is rolled back, its payment
// untouched; the other two commit in the same transaction.
func testHostedRejectedFinalizeRollsBackAlone(t *testing.T, b Backend) {
	db := seeded(t, b, 3)
	var (
		started sync.WaitGroup
		gate    = make(chan struct{})
		batches [][]engine.FinalizeResult
		mu      sync.Mutex
	)
	started.Add(3)
	// Stopped after its batch: the thief's row stays Processing under the host's old lease end,
	// which the host would reclaim when it ends.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := hostOptions("Host-1", 3)
	opt.BatchMax, opt.Linger = 3, 10*time.Second
	opt.Process = func(ctx context.Context, m engine.Message) (engine.ProviderResult, error) {
		started.Done()
		<-gate
		return paidBy(ctx, m)
	}
	opt.OnBatch = func(_ []engine.FinalizeRequest, res []engine.FinalizeResult) {
		mu.Lock()
		batches = append(batches, res)
		mu.Unlock()
		cancel()
	}
	type ran struct {
		st  engine.HostStats
		err error
	}
	out := make(chan ran, 1)
	go func() { st, err := engine.RunHost(ctx, db, opt); out <- ran{st, err} }()
	started.Wait() // all three claimed, in one fetch, and being processed
	b.Exec(t, db, `UPDATE OutboxMessages SET LockedBy = 'Worker-Thief', LeaseVersion = LeaseVersion + 1 WHERE IdempotencyKey = 'PAY-002'`)
	close(gate)
	r := <-out
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.st.Fetches != 1 || r.st.Batches != 1 || r.st.Finalized != 2 || r.st.Rejected != 1 {
		t.Fatalf("stats %+v; want 1 fetch, 1 batch, 2 finalized, 1 rejected", r.st)
	}
	if len(batches) != 1 || len(batches[0]) != 3 {
		t.Fatalf("batches %+v; want one of 3", batches)
	}
	for key, want := range map[string]string{"PAY-001": engine.PaymentPaid, "PAY-002": engine.PaymentPending, "PAY-003": engine.PaymentPaid} {
		row := RowByKey(t, db, key)
		if row.PaymentStatus != want {
			t.Errorf("%s: payment %s, want %s (%+v)", key, row.PaymentStatus, want, row)
		}
	}
	if row := RowByKey(t, db, "PAY-002"); row.Status != engine.StatusProcessing || row.LockedBy != "Worker-Thief" || row.TransactionID != "" {
		t.Errorf("PAY-002 after the rejected finalize: %+v; want the thief's Processing row, no transaction id", row)
	}
}

// A hosted worker stopped while it holds messages finishes those whose call answers within
// Finish, releases (guarded) the one whose call does not, and exits: no row is left
// Processing, so nothing waits for a lease to expire; every message is Processed or Pending.
func testHostedCleanShutdownLeavesNoProcessing(t *testing.T, b Backend) {
	const msgs, slots = 40, 4
	db := seeded(t, b, msgs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &finalizedBy{keys: map[string]int{}}
	var once sync.Once
	opt := hostOptions("Host-1", slots)
	opt.OnEvent, opt.Finish = f.event, 300*time.Millisecond
	opt.Process = func(pctx context.Context, m engine.Message) (engine.ProviderResult, error) {
		wait := 20 * time.Millisecond
		switch m.IdempotencyKey {
		case "PAY-009":
			wait = time.Hour // a call that does not answer before Finish
		case "PAY-010":
			once.Do(cancel) // the stop comes while PAY-009 and PAY-010 are being processed
		}
		select {
		case <-time.After(wait):
		case <-pctx.Done():
			return engine.ProviderResult{}, pctx.Err()
		}
		return paidBy(pctx, m)
	}
	st, err := engine.RunHost(ctx, db, opt)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.OutboxProcessing != 0 || c.OutboxProcessed+c.OutboxPending != msgs {
		t.Fatalf("after a clean stop: counts %+v, stats %+v; want no row Processing", c, st)
	}
	if c.OutboxProcessed != st.Finalized || len(f.keys) != st.Finalized || st.Rejected != 0 {
		t.Fatalf("processed %d, stats %+v, finalized events %d", c.OutboxProcessed, st, len(f.keys))
	}
	if f.keys["PAY-010"] != 1 {
		t.Errorf("PAY-010, in progress at the stop, was not finished (stats %+v)", st)
	}
	if row := RowByKey(t, db, "PAY-009"); row.Status != engine.StatusPending || st.Released < 1 {
		t.Errorf("PAY-009, whose call did not answer, was not released: %+v (stats %+v)", row, st)
	}
	// What it released is claimable at once by the next worker.
	rest := hostOptions("Host-2", slots)
	rest.UntilEmpty, rest.OnEvent = true, f.event
	if _, err := engine.RunHost(context.Background(), db, rest); err != nil {
		t.Fatal(err)
	}
	if c, _ := db.Counts(context.Background()); c.OutboxProcessed != msgs || len(f.keys) != msgs {
		t.Fatalf("after the second worker: counts %+v, %d keys finalized", c, len(f.keys))
	}
	for k, n := range f.keys {
		if n != 1 {
			t.Errorf("%s finalized %d times", k, n)
		}
	}
}

// A hosted worker renews the leases it holds: a message whose processing takes three leases is
// still its own when it finalizes, and committed.
func testHostedHeartbeatKeepsLeases(t *testing.T, b Backend) {
	db := seeded(t, b, 2)
	opt := hostOptions("Host-1", 2)
	opt.Lease, opt.HeartbeatEvery, opt.UntilEmpty = 400*time.Millisecond, 100*time.Millisecond, true
	opt.Process = func(ctx context.Context, m engine.Message) (engine.ProviderResult, error) {
		time.Sleep(1200 * time.Millisecond)
		return paidBy(ctx, m)
	}
	st, err := engine.RunHost(context.Background(), db, opt)
	if err != nil {
		t.Fatal(err)
	}
	if st.Finalized != 2 || st.Rejected != 0 || st.Renewed < 4 || st.LostLeases != 0 {
		t.Fatalf("stats %+v; want 2 finalized, none rejected, leases renewed", st)
	}
}
