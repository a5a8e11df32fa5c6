package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store"
	"leaselab/store/postgres"
	"leaselab/store/storetest"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// benchWorkers are the worker counts every variant runs at.
var benchWorkers = []int{1, 2, 4, 8, 16}

// BenchmarkVersusRiver works b.N messages (jobs) to the end at each worker count, side by side
// on one server in one run: leaselab's claim + finalize, fused step and batch on PostgreSQL,
// River v0.51.2 (riverpgxv5) inserting and working the same number of jobs, and leaselab's claim
// + finalize on a SQLite file. Seeding (inserting) is not timed; msgs/s is b.N over the time
// from the first claim (fetch) to the last finalize (completion). Run it with a fixed count:
//
//	LEASELAB_PG=postgres://… go test ./store/postgres -run '^$' -bench VersusRiver -benchtime 3000x
func BenchmarkVersusRiver(b *testing.B) {
	for _, w := range benchWorkers {
		b.Run(fmt.Sprintf("leaselab-pg/claim+finalize/workers=%d", w), func(b *testing.B) { benchLeaselab(b, pgBench(b), w, claimFinalize) })
		b.Run(fmt.Sprintf("leaselab-pg/fused/workers=%d", w), func(b *testing.B) { benchLeaselab(b, pgBench(b), w, fused) })
		b.Run(fmt.Sprintf("leaselab-pg/batch16/workers=%d", w), func(b *testing.B) { benchLeaselab(b, pgBench(b), w, batch) })
		b.Run(fmt.Sprintf("river/workers=%d", w), func(b *testing.B) { benchRiver(b, w) })
		b.Run(fmt.Sprintf("leaselab-sqlite/claim+finalize/workers=%d", w), func(b *testing.B) { benchLeaselab(b, sqliteBench(b), w, claimFinalize) })
	}
}

func pgBench(b *testing.B) engine.DB { return newDB(b) }

func sqliteBench(b *testing.B) engine.DB {
	db, err := store.Create(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// loop is one worker's work until the queue is empty.
type loop func(ctx context.Context, c storetest.Batcher, name string) error

var benchNow = engine.Epoch

func benchClaim(name string) engine.ClaimRequest {
	return engine.ClaimRequest{Worker: name, Now: benchNow, Until: benchNow.Add(time.Hour)}
}

func benchFin(name string, m engine.Message) engine.FinalizeRequest {
	return engine.FinalizeRequest{Worker: name, Message: m, Now: benchNow, PaymentStatus: engine.PaymentPaid,
		TransactionID: "txn_" + m.IdempotencyKey, OwnershipCheck: true, Fencing: true}
}

// claimNext claims the next message for a worker draining the queue. A claim that finds only
// rows that other workers hold (ClaimBlocked) ends the worker's loop as an empty queue does:
// their leases last an hour and their holders finalize them (the benchmark checks that every
// message was), so waiting could only spin. Retrying at once made the workers that had run out
// of work spin at the queue's end, each spin a claim and a read of every unfinished row, taking
// the two cores from the workers still finalizing. A lock timeout (ErrBusy) is tried again.
func claimNext(ctx context.Context, c storetest.Batcher, name string) (engine.ClaimResult, bool, error) {
	for {
		res, err := c.Claim(ctx, benchClaim(name))
		switch {
		case errors.Is(err, engine.ErrBusy):
			continue
		case err != nil:
			return res, false, err
		case res.Outcome == engine.ClaimLost:
			continue // another claim took the row it found: work is left
		}
		return res, res.Outcome == engine.ClaimWon, nil
	}
}

func claimFinalize(ctx context.Context, c storetest.Batcher, name string) error {
	for {
		res, more, err := claimNext(ctx, c, name)
		if err != nil || !more {
			return err
		}
		if fin, err := c.Finalize(ctx, benchFin(name, res.Message)); err != nil || !fin.Committed {
			return fmt.Errorf("finalize %s: %+v %v", res.Message.IdempotencyKey, fin, err)
		}
	}
}

func fused(ctx context.Context, c storetest.Batcher, name string) error {
	cur, _, err := claimNext(ctx, c, name)
	for err == nil && cur.Outcome == engine.ClaimWon {
		var fin engine.FinalizeResult
		m := cur.Message
		fin, cur, err = c.FinalizeAndClaim(ctx, benchFin(name, m), benchClaim(name))
		if err == nil && !fin.Committed {
			err = fmt.Errorf("finalize %s lost", m.IdempotencyKey)
		}
	}
	return err
}

func batch(ctx context.Context, c storetest.Batcher, name string) error {
	for {
		msgs, err := c.ClaimBatch(ctx, benchClaim(name), 16)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			// Nothing claimable: done, unless a row was skipped while another claim held it.
			res, more, err := claimNext(ctx, c, name)
			if err != nil || !more {
				return err
			}
			msgs = []engine.Message{res.Message}
		}
		reqs := make([]engine.FinalizeRequest, len(msgs))
		for i, m := range msgs {
			reqs[i] = benchFin(name, m)
		}
		res, err := c.FinalizeBatch(ctx, reqs)
		if err != nil {
			return err
		}
		for i, r := range res {
			if !r.Committed {
				return fmt.Errorf("finalize %s lost", msgs[i].IdempotencyKey)
			}
		}
	}
}

// benchLeaselab seeds b.N messages into db, then times workers running work until none is left.
func benchLeaselab(b *testing.B, db engine.DB, workers int, work loop) {
	ctx := context.Background()
	seeder, ok := db.(interface {
		SeedBulk(context.Context, int, time.Time) error
	})
	if !ok {
		b.Fatal("the backend cannot seed in bulk")
	}
	if err := seeder.SeedBulk(ctx, b.N, benchNow); err != nil {
		b.Fatal(err)
	}
	conns := make([]storetest.Batcher, workers)
	for i := range conns {
		c, err := db.Connect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[i] = c.(storetest.Batcher)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu := readCPU()
	start := time.Now()
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = work(ctx, conns[i], fmt.Sprintf("Worker-%d", i+1))
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	_, onServer := db.(*postgres.DB)
	cpu.report(b, b.N, onServer)
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	if c, err := db.Counts(ctx); err != nil || c.OutboxProcessed != b.N {
		b.Fatalf("processed %d of %d (%v)", c.OutboxProcessed, b.N, err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

// paymentArgs is the River job of one payment status check.
type paymentArgs struct {
	Key string `json:"key"`
}

func (paymentArgs) Kind() string { return "payment_status_check" }

// paymentWorker does what leaselab's benchmark workers do between claim and finalize: nothing.
type paymentWorker struct {
	river.WorkerDefaults[paymentArgs]
}

func (paymentWorker) Work(context.Context, *river.Job[paymentArgs]) error { return nil }

// benchRiver inserts b.N jobs into a fresh schema (River's own tables, migrated there), then
// times a River client with workers workers from its start until every job has completed.
func benchRiver(b *testing.B, workers int) {
	ctx := context.Background()
	schema := newDB(b).SchemaName() // a fresh schema of its own, dropped at the end
	cfg, err := pgxpool.ParseConfig(storetest.PostgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = int32(workers + 8)
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		b.Fatal(err)
	}
	ws := river.NewWorkers()
	river.AddWorker(ws, paymentWorker{})
	client, err := river.NewClient(driver, &river.Config{
		Schema:            schema,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers:           ws,
		FetchCooldown:     time.Millisecond, // River's minimum: fetch again as soon as slots free up
		FetchPollInterval: 5 * time.Millisecond,
	})
	if err != nil {
		b.Fatal(err)
	}
	params := make([]river.InsertManyParams, b.N)
	for i := range params {
		params[i] = river.InsertManyParams{Args: paymentArgs{Key: engine.MessageKey(i + 1)}}
	}
	for lo := 0; lo < len(params); lo += 5000 {
		if _, err := client.InsertManyFast(ctx, params[lo:min(lo+5000, len(params))]); err != nil {
			b.Fatal(err)
		}
	}
	// A channel that holds every event: River drops events a full channel cannot take.
	completed, cancel := client.SubscribeConfig(&river.SubscribeConfig{ChanSize: b.N + 16, Kinds: []river.EventKind{river.EventKindJobCompleted}})
	defer cancel()
	b.ResetTimer()
	cpu := readCPU()
	start := time.Now()
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	for n := 0; n < b.N; n++ {
		select {
		case <-completed:
		case <-time.After(60 * time.Second):
			b.Fatalf("River completed %d of %d jobs", n, b.N)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cpu.report(b, b.N, true)
	stop, done := context.WithTimeout(ctx, 10*time.Second)
	defer done()
	if err := client.Stop(stop); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}
