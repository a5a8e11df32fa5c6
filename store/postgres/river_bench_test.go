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

// benchWorkers are the worker counts BenchmarkPaths runs every path at.
var benchWorkers = []int{1, 2, 4, 8, 16}

// BenchmarkVersusRiver is the comparison of issues 22 and 34, every variant side by side on one
// server in one run, so that they see the same load: leaselab's claim + finalize at 1 and 16
// workers (connections); River v0.51.2 (riverpgxv5) with as many job slots (MaxWorkers), and at
// its default 100, doing no work; River doing the same writes as a leaselab finalize (the
// payment's UPDATE, then River's own completer marks the job done, in its batches) at 16 and 100
// slots, and, as River's slow path, the same writes in one transaction with JobCompleteTx; and
// leaselab's hosted worker (engine.RunHost: one fetcher, one completer) at 16 and 100 slots.
// River runs with its default fetch settings (FetchCooldown 100 ms, FetchPollInterval 1 s:
// "default") and with the fastest it allows (1 ms and 5 ms: "fast"); the default at 1 slot is
// left out (it fetches one job every 100 ms: 10 msgs/s). Each reports
// msgs/s, CPU per message of the client and (with LEASELAB_BENCH_PGPID) of the server, and, when
// the server has pg_stat_statements, statements and commits per message. Whether the server
// syncs its commits (fsync, synchronous_commit) is the server's: .ci/bench-pg.sh starts one of
// each and runs this benchmark on both, interleaved, with pgbench's raw rate beside it.
//
//	LEASELAB_PG=postgres://… go test ./store/postgres -run '^$' -bench VersusRiver -benchtime 2000x
func BenchmarkVersusRiver(b *testing.B) {
	river := func(work riverWork, fetch riverFetch, slots int) {
		b.Run(fmt.Sprintf("river/%s/%s/slots=%d", work, fetch, slots), func(b *testing.B) { benchRiver(b, slots, work, fetch) })
	}
	for _, w := range []int{1, 16} {
		b.Run(fmt.Sprintf("leaselab/claim+finalize/workers=%d", w), func(b *testing.B) { benchLeaselab(b, pgBench(b), w, claimFinalize) })
		river(riverNoWork, riverFast, w)
		if w != 1 {
			river(riverNoWork, riverDefault, w)
		}
	}
	for _, s := range []int{16, 100} {
		b.Run(fmt.Sprintf("leaselab/hosted/slots=%d", s), func(b *testing.B) { benchHosted(b, s) })
		if s != 16 {
			river(riverNoWork, riverFast, s)
			river(riverNoWork, riverDefault, s)
		}
		river(riverSameWrites, riverFast, s)
		river(riverSameWrites, riverDefault, s)
		river(riverInTx, riverFast, s)
	}
}

// riverWork is what a River job's Work does.
type riverWork string

const (
	// riverNoWork returns at once: no payment is written.
	riverNoWork riverWork = "nowork"
	// riverSameWrites writes the payment (one UPDATE, its rows affected checked) and returns;
	// River's completer then marks the job completed, in its batches: the writes of a leaselab
	// finalize, River's normal way.
	riverSameWrites riverWork = "same-writes"
	// riverInTx writes the payment and completes the job in one transaction (JobCompleteTx):
	// River's slow path, which gives up its batched completion.
	riverInTx riverWork = "in-tx-slow-path"
)

// riverFetch is how often River fetches.
type riverFetch string

const (
	// riverDefault leaves River's fetch settings at their defaults (v0.51.2: FetchCooldown
	// 100 ms, FetchPollInterval 1 s).
	riverDefault riverFetch = "default"
	// riverFast is the fastest River allows: FetchCooldown 1 ms, FetchPollInterval 5 ms.
	riverFast riverFetch = "fast"
)

// BenchmarkPaths runs leaselab's own paths on PostgreSQL (claim + finalize, the fused step, the
// batch of 16) and claim + finalize on a SQLite file, at 1 to 16 workers: the tables of issue 12
// in docs/benchmarks.md.
func BenchmarkPaths(b *testing.B) {
	for _, w := range benchWorkers {
		b.Run(fmt.Sprintf("leaselab-pg/claim+finalize/workers=%d", w), func(b *testing.B) { benchLeaselab(b, pgBench(b), w, claimFinalize) })
		b.Run(fmt.Sprintf("leaselab-pg/fused/workers=%d", w), func(b *testing.B) { benchLeaselab(b, pgBench(b), w, fused) })
		b.Run(fmt.Sprintf("leaselab-pg/batch16/workers=%d", w), func(b *testing.B) { benchLeaselab(b, pgBench(b), w, batch) })
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
	_, onServer := db.(*postgres.DB)
	srv := readServer(b, onServer)
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
	cpu.report(b, b.N, onServer)
	for _, c := range conns {
		c.Close() // their backends' statistics reach pg_stat_database when they end
	}
	srv.report(b, b.N)
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	if c, err := db.Counts(ctx); err != nil || c.OutboxProcessed != b.N {
		b.Fatalf("processed %d of %d (%v)", c.OutboxProcessed, b.N, err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

// benchHosted seeds b.N messages, then times a hosted worker of slots slots (engine.RunHost,
// its provider answering at once) from its start until it has finalized them all.
func benchHosted(b *testing.B, slots int) {
	ctx := context.Background()
	db := newDB(b)
	if err := db.SeedBulk(ctx, b.N, benchNow); err != nil {
		b.Fatal(err)
	}
	srv := readServer(b, true)
	b.ResetTimer()
	cpu := readCPU()
	start := time.Now()
	st, err := engine.RunHost(ctx, db, engine.HostOptions{Name: "Host-1", Slots: slots, Lease: time.Hour, Poll: time.Millisecond,
		UntilEmpty: true, Process: func(_ context.Context, m engine.Message) (engine.ProviderResult, error) {
			return engine.ProviderResult{Status: engine.PaymentPaid, TransactionID: "txn_" + m.IdempotencyKey}, nil
		}})
	elapsed := time.Since(start)
	b.StopTimer()
	cpu.report(b, b.N, true)
	srv.report(b, b.N) // RunHost has closed its connections
	if err != nil {
		b.Fatal(err)
	}
	if st.Finalized != b.N || st.Rejected != 0 {
		b.Fatalf("hosted worker: %+v, want %d finalized", st, b.N)
	}
	b.ReportMetric(float64(st.Claimed)/float64(max(st.Fetches, 1)), "msgs/fetch")
	b.ReportMetric(float64(st.Finalized)/float64(max(st.Batches, 1)), "msgs/batch")
	// Where the time went: the share of the run the fetcher waited for free places and spent in
	// its claims, how many of the places asked for a claim filled, the slots' mean share waiting
	// for a message and for room in the completers' queue, the completers' summed share waiting
	// for a batch, their mean claim and finalize transaction.
	w, sec := st.Waits, elapsed.Seconds()
	b.ReportMetric(w.FetchIdle.Seconds()/sec, "fetch-idle")
	b.ReportMetric(w.FetchSQL.Seconds()/sec, "fetch-busy")
	b.ReportMetric(float64(st.Claimed)/float64(max(w.Asked, 1)), "fill")
	b.ReportMetric(w.SlotIdle.Seconds()/sec/float64(slots), "slot-idle")
	b.ReportMetric(w.SlotHand.Seconds()/sec/float64(slots), "slot-hand")
	b.ReportMetric(w.DoneIdle.Seconds()/sec, "done-idle")
	b.ReportMetric(float64(w.FetchSQL.Microseconds())/1000/float64(max(st.Fetches+st.EmptyFetches, 1)), "ms/fetch")
	b.ReportMetric(float64(w.DoneSQL.Microseconds())/1000/float64(max(st.Batches, 1)), "ms/batch")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

// paymentArgs is the River job of one payment status check.
type paymentArgs struct {
	Key string `json:"key"`
}

func (paymentArgs) Kind() string { return "payment_status_check" }

// paymentWorker does what leaselab's benchmark workers do between claim and finalize: nothing.
// With pool set it also writes what a leaselab finalize writes (work says how).
type paymentWorker struct {
	river.WorkerDefaults[paymentArgs]
	pool *pgxpool.Pool
	work riverWork
}

// paymentSQL is the payment's UPDATE of River's runs.
const paymentSQL = `UPDATE river_payments SET status = 'Paid', txid = $2 WHERE key = $1`

func (w paymentWorker) Work(ctx context.Context, job *river.Job[paymentArgs]) error {
	if w.pool == nil {
		return nil
	}
	if w.work == riverSameWrites {
		tag, err := w.pool.Exec(ctx, paymentSQL, job.Args.Key, "txn_"+job.Args.Key)
		if err == nil && tag.RowsAffected() != 1 {
			err = fmt.Errorf("payment %s: %d rows", job.Args.Key, tag.RowsAffected())
		}
		return err
	}
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	tag, err := tx.Exec(ctx, paymentSQL, job.Args.Key, "txn_"+job.Args.Key)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("payment %s: %d rows", job.Args.Key, tag.RowsAffected())
	}
	if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// benchRiver inserts b.N jobs into a fresh schema (River's own tables, migrated there), then
// times a River client with workers job slots, fetching as fetch says, from its start until every
// job has completed. Unless work is riverNoWork, each job also updates its payment (a
// river_payments table of b.N rows in the same schema), as work says.
func benchRiver(b *testing.B, workers int, work riverWork, fetch riverFetch) {
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
	w := paymentWorker{work: work}
	if work != riverNoWork {
		w.pool = pool
		if _, err := pool.Exec(ctx, `CREATE TABLE river_payments (key text PRIMARY KEY, status text NOT NULL, txid text) WITH (fillfactor = 80);
INSERT INTO river_payments SELECT 'PAY-' || CASE WHEN i < 100 THEN lpad(i::text, 3, '0') ELSE i::text END, 'Pending', NULL FROM generate_series(1, `+fmt.Sprint(b.N)+`) i;
ANALYZE river_payments`); err != nil {
			b.Fatal(err)
		}
	}
	river.AddWorker(ws, w)
	config := &river.Config{
		Schema:  schema,
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers: ws,
	}
	if fetch == riverFast {
		config.FetchCooldown = time.Millisecond // River's minimum: fetch again as soon as slots free up
		config.FetchPollInterval = 5 * time.Millisecond
	}
	client, err := river.NewClient(driver, config)
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
	srv := readServer(b, true)
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
	pool.Close() // its backends' statistics reach pg_stat_database when they end
	srv.report(b, b.N)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}
