package store

// Benchmarks of issue 5, "Speed": leaselab's claim + finalize, the fused step and the batch
// claim against the raw SQLite write limit and maragu.dev/goqite, in one process, on file
// databases in WAL with the same driver and the same DSN (dsn(): busy_timeout, WAL,
// synchronous=NORMAL, foreign keys, BEGIN IMMEDIATE). Every worker has its own connection and
// goroutine. Run them with .ci/bench.sh, which prints one table.
//
// b.N is the number of messages processed (BenchmarkFairness: 4×b.N, as a long wait needs a long
// run); use -benchtime=Nx. A run seeds queued+messages and processes the oldest, so at least
// `queued` messages stay queued behind the work. Each run reports:
//   - msgs/s: messages finalized (goqite: deleted) per second of wall time;
//   - max-wait-ms, p99-wait-ms: the longest and the 99th-percentile transaction call, from
//     asking to done; with several workers, almost all of it is the wait for the write lock;
//   - min-share-%: the least productive worker's share of the messages (100/workers is fair);
//   - cpu-us/msg: the process's CPU time per message, less sensitive than msgs/s to other
//     programs on the machine.
//
// Runs that are compared sit next to each other (BenchmarkQueues interleaves goqite and
// leaselab for each worker count), so that a noisy minute hits both; with -count, the report
// takes the median of the ratios of each pass.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/store/storetest"

	"maragu.dev/goqite"
)

// benchT0 is the scenario time of every claim and finalize: time is a parameter of the store.
var benchT0 = engine.Epoch

// batchK is the batch size of the batch runs.
const batchK = 16

// benchQueued is how many messages stay queued in every run but the backlog ones.
const benchQueued = 1000

// waitMode is how a worker waits for the write lock.
type waitMode string

const (
	// waitSQLite is the default: busy_timeout and SQLite's busy handler back-off.
	waitSQLite waitMode = "sqlite"
	// waitRetry: busy_timeout 0, and a retry in Go after a short random sleep.
	waitRetry waitMode = "retry"
	// waitQueue: Options.FairWriteLock, turns of up to fairTurn taken in arrival order.
	waitQueue waitMode = "queue"
	// waitFIFO: the same queue with every transaction a turn of its own.
	waitFIFO waitMode = "fifo"
)

// The retry mode's sleep between attempts: retrySleepMin plus up to retrySleepJitter.
const (
	retrySleepMin    = 20 * time.Microsecond
	retrySleepJitter = 200 * time.Microsecond
)

// BenchmarkRawLimit is the ceiling: one connection doing BEGIN IMMEDIATE; one UPDATE; COMMIT,
// three statements prepared on it, the way a worker's transaction runs (Conn.inTx).
func BenchmarkRawLimit(b *testing.B) {
	db := benchDB(b, benchQueued)
	pool, err := openPool(db.Path(), true, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	ctx := context.Background()
	conn, err := pool.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	var stmts [3]*sql.Stmt
	for i, q := range []string{beginSQL, `UPDATE OutboxMessages SET Attempts = Attempts + 1 WHERE Id = ?`, commitSQL} {
		if stmts[i], err = conn.PrepareContext(ctx, q); err != nil {
			b.Fatal(err)
		}
		defer stmts[i].Close()
	}
	begin, upd, commit := stmts[0], stmts[1], stmts[2]
	runWorkers(b, b.N, 1, waitSQLite, func(_ int, left *budget, st *workerStats) error {
		for i := 0; left.take(1) == 1; i++ {
			err := st.timed(func() error {
				if _, err := begin.ExecContext(ctx); err != nil {
					return err
				}
				if _, err := upd.ExecContext(ctx, i%benchQueued+1); err != nil {
					return err
				}
				_, err := commit.ExecContext(ctx)
				return err
			})
			if err != nil {
				return err
			}
			st.done++
		}
		return nil
	})
}

// leaselabLoop is one worker's loop over its own connection.
type leaselabLoop func(ctx context.Context, c *Conn, w int, left *budget, st *workerStats) error

// run describes one benchmark run.
type run struct {
	workers int
	wait    waitMode
	queued  int  // messages that stay queued behind the work
	scale   int  // messages per b.N; 0 means 1
	payment bool // goqite: update the payment in the Delete's transaction, as a finalize does
}

// sizes returns how many messages the run processes and how many stay queued. The framework's
// first call (b.N = 1) only probes: it gets a small database.
func (r run) sizes(b *testing.B) (msgs, queued int) {
	msgs, queued = b.N*max(r.scale, 1), r.queued
	if b.N == 1 {
		queued = min(queued, benchQueued)
	}
	return msgs, queued
}

// leaselabVariants are the ways leaselab's workers run in the benchmarks, by the name a
// benchmark gives them: the loop each worker runs and how it waits for the write lock.
var leaselabVariants = map[string]struct {
	wait waitMode
	loop leaselabLoop
}{
	"claim-finalize":       {waitSQLite, claimFinalizeLoop},
	"claim-finalize-retry": {waitRetry, claimFinalizeLoop},
	"claim-finalize-fifo":  {waitFIFO, claimFinalizeLoop},
	"claim-finalize-fair":  {waitQueue, claimFinalizeLoop},
	"fused":                {waitSQLite, fusedLoop},
	"fused-fair":           {waitQueue, fusedLoop},
	"batch-claim":          {waitSQLite, batchClaimLoop},
	"batch":                {waitSQLite, batchLoop},
}

// runVariant runs the leaselab variant name as r says, with the variant's way of waiting.
func runVariant(b *testing.B, name string, r run) {
	v, ok := leaselabVariants[name]
	if !ok {
		b.Fatalf("no leaselab variant %q", name)
	}
	r.wait = v.wait
	runLeaselab(b, r, v.loop)
}

// BenchmarkQueues compares, for each worker count, goqite's Receive + Delete (and the same with
// the payment updated in the Delete's transaction, the work leaselab's finalize does) with
// leaselab's claim + finalize, fused step and batches, then (with several workers) claim +
// finalize and the fused step with the fair write-lock queue.
func BenchmarkQueues(b *testing.B) {
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("workers=%d/goqite", n), func(b *testing.B) {
			runGoqite(b, run{workers: n, queued: benchQueued})
		})
		b.Run(fmt.Sprintf("workers=%d/goqite-payment", n), func(b *testing.B) {
			runGoqite(b, run{workers: n, queued: benchQueued, payment: true})
		})
		for _, name := range []string{"claim-finalize", "fused", "batch-claim", "batch", "claim-finalize-fair", "fused-fair"} {
			if leaselabVariants[name].wait == waitQueue && n == 1 {
				continue // one worker never waits: the same as without the queue
			}
			b.Run(fmt.Sprintf("workers=%d/%s", n, name), func(b *testing.B) {
				runVariant(b, name, run{workers: n, queued: benchQueued})
			})
		}
	}
}

// BenchmarkBacklog runs one worker with 1,000 and with 100,000 messages queued behind it: the
// claim's ordered scan of the partial index must not slow down with the backlog.
func BenchmarkBacklog(b *testing.B) {
	for _, name := range []string{"claim-finalize", "fused"} {
		for _, queued := range []int{1000, 100_000} {
			b.Run(fmt.Sprintf("%s/queued=%d", name, queued), func(b *testing.B) {
				runVariant(b, name, run{workers: 1, queued: queued})
			})
		}
	}
}

// BenchmarkFairness runs 8 workers with each way of waiting for the write lock: SQLite's busy
// handler (goqite and leaselab), a retry in Go with short random sleeps and busy_timeout 0, the
// queue with one transaction per turn, and the fair queue of Options.FairWriteLock. Its runs
// are 4 times longer than the others: a wait of a second needs a run of several.
func BenchmarkFairness(b *testing.B) {
	const n, scale = 8, 4
	b.Run("workers=8/goqite", func(b *testing.B) {
		runGoqite(b, run{workers: n, queued: benchQueued, scale: scale})
	})
	for _, name := range []string{"claim-finalize", "claim-finalize-retry", "claim-finalize-fifo", "claim-finalize-fair", "fused", "fused-fair"} {
		b.Run("workers=8/"+name, func(b *testing.B) {
			runVariant(b, name, run{workers: n, queued: benchQueued, scale: scale})
		})
	}
}

// claimFinalizeLoop is leaselab's worker loop: Claim, then Finalize with the ownership check
// and fencing, two transactions per message.
func claimFinalizeLoop(ctx context.Context, c *Conn, w int, left *budget, st *workerStats) error {
	for left.take(1) == 1 {
		var res engine.ClaimResult
		if err := st.timed(func() (err error) { res, err = c.Claim(ctx, claimReq(w)); return err }); err != nil {
			return err
		}
		if res.Outcome != engine.ClaimWon {
			return fmt.Errorf("claim: %v", res.Outcome)
		}
		if err := finalizeOne(ctx, c, w, res.Message, st); err != nil {
			return err
		}
	}
	return nil
}

// fusedLoop finalizes the message in hand and claims the next in one transaction; only the
// first claim and the last finalize are transactions of their own.
func fusedLoop(ctx context.Context, c *Conn, w int, left *budget, st *workerStats) error {
	if left.take(1) == 0 {
		return nil
	}
	var cur engine.ClaimResult
	if err := st.timed(func() (err error) { cur, err = c.Claim(ctx, claimReq(w)); return err }); err != nil {
		return err
	}
	for {
		if cur.Outcome != engine.ClaimWon {
			return fmt.Errorf("claim: %v", cur.Outcome)
		}
		if left.take(1) == 0 {
			return finalizeOne(ctx, c, w, cur.Message, st)
		}
		var fin engine.FinalizeResult
		m := cur.Message
		err := st.timed(func() (err error) {
			fin, cur, err = c.FinalizeAndClaim(ctx, finReq(w, m), claimReq(w))
			return err
		})
		if err != nil {
			return err
		}
		if !fin.Committed {
			return fmt.Errorf("fused finalize %s: rolled back", m.IdempotencyKey)
		}
		st.done++
	}
}

// batchClaimLoop claims up to batchK messages in one transaction and finalizes each in its own.
func batchClaimLoop(ctx context.Context, c *Conn, w int, left *budget, st *workerStats) error {
	for {
		msgs, err := claimBatch(ctx, c, w, left, st)
		if err != nil || len(msgs) == 0 {
			return err
		}
		for _, m := range msgs {
			if err := finalizeOne(ctx, c, w, m, st); err != nil {
				return err
			}
		}
	}
}

// batchLoop claims up to batchK messages in one transaction and finalizes them in another.
func batchLoop(ctx context.Context, c *Conn, w int, left *budget, st *workerStats) error {
	for {
		msgs, err := claimBatch(ctx, c, w, left, st)
		if err != nil || len(msgs) == 0 {
			return err
		}
		reqs := make([]engine.FinalizeRequest, len(msgs))
		for i, m := range msgs {
			reqs[i] = finReq(w, m)
		}
		var res []engine.FinalizeResult
		if err := st.timed(func() (err error) { res, err = c.FinalizeBatch(ctx, reqs); return err }); err != nil {
			return err
		}
		for i, r := range res {
			if !r.Committed {
				return fmt.Errorf("batch finalize %s: rolled back", msgs[i].IdempotencyKey)
			}
			st.done++
		}
	}
}

func claimBatch(ctx context.Context, c *Conn, w int, left *budget, st *workerStats) ([]engine.Message, error) {
	k := left.take(batchK)
	if k == 0 {
		return nil, nil
	}
	var msgs []engine.Message
	if err := st.timed(func() (err error) { msgs, err = c.ClaimBatch(ctx, claimReq(w), k); return err }); err != nil {
		return nil, err
	}
	if len(msgs) != k {
		return nil, fmt.Errorf("batch claimed %d, want %d", len(msgs), k)
	}
	return msgs, nil
}

// finalizeOne finalizes m in a transaction of its own and counts it.
func finalizeOne(ctx context.Context, c *Conn, w int, m engine.Message, st *workerStats) error {
	var fin engine.FinalizeResult
	if err := st.timed(func() (err error) { fin, err = c.Finalize(ctx, finReq(w, m)); return err }); err != nil {
		return err
	}
	if !fin.Committed {
		return fmt.Errorf("finalize %s: rolled back", m.IdempotencyKey)
	}
	st.done++
	return nil
}

func workerName(w int) string { return fmt.Sprintf("Worker-%d", w+1) }

func claimReq(w int) engine.ClaimRequest {
	return engine.ClaimRequest{Worker: workerName(w), Now: benchT0, Until: benchT0.Add(time.Hour)}
}

func finReq(w int, m engine.Message) engine.FinalizeRequest {
	return engine.FinalizeRequest{Worker: workerName(w), Message: m, Now: benchT0,
		PaymentStatus: engine.PaymentPaid, TransactionID: fmt.Sprintf("txn_%d", m.ID),
		OwnershipCheck: true, Fencing: true}
}

// runLeaselab runs loop on r.workers workers, each on its own connection, over a fresh database.
func runLeaselab(b *testing.B, r run, loop leaselabLoop) {
	msgs, queued := r.sizes(b)
	db := benchDB(b, queued+msgs)
	conns := benchConns(b, db, r.workers, r.wait)
	ctx := context.Background()
	runWorkers(b, msgs, r.workers, r.wait, func(w int, left *budget, st *workerStats) error {
		return loop(ctx, conns[w], w, left, st)
	})
}

// benchDB creates a leaselab database in b's temp folder with queued Pending messages, and
// checkpoints it so that every run starts with an empty WAL.
func benchDB(b testing.TB, queued int) *DB {
	b.Helper()
	ctx := context.Background()
	db, err := Create(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.SeedBulk(ctx, queued, benchT0); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Checkpoint(ctx); err != nil {
		b.Fatal(err)
	}
	return db
}

// benchConns opens n worker connections to db that wait for the write lock as wait says.
func benchConns(b testing.TB, db *DB, n int, wait waitMode) []*Conn {
	b.Helper()
	ctx := context.Background()
	switch wait {
	case waitQueue:
		db.apply(Options{FairWriteLock: true})
	case waitFIFO:
		db.gate = newWriteGate(0, fairGrace)
	}
	conns := make([]*Conn, n)
	for i := range conns {
		var c *Conn
		if wait == waitRetry {
			// The store's DSN with busy_timeout 0: a taken write lock fails BEGIN IMMEDIATE at
			// once with SQLITE_BUSY (engine.ErrBusy), before the transaction has done anything.
			busy := fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds())
			pool, err := sql.Open("sqlite", strings.Replace(dsn(db.path, true), busy, "busy_timeout(0)", 1))
			if err != nil {
				b.Fatal(err)
			}
			pool.SetMaxOpenConns(1)
			c = &Conn{pool: pool, stmts: map[string]*sql.Stmt{}}
			if err := c.prepare(ctx); err != nil {
				b.Fatal(err)
			}
		} else {
			ec, err := db.Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			c = ec.(*Conn)
		}
		conns[i] = c
		b.Cleanup(func() { c.Close() })
	}
	return conns
}

// goqiteSchema is schema_sqlite.sql of maragu.dev/goqite v0.4.0, kept in testdata for the
// benchmarks and the chaos harness alike.
func goqiteSchema(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile("testdata/goqite_schema_sqlite.sql")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// runGoqite runs goqite's Receive + Delete (two transactions per message) on r.workers workers,
// each on its own connection opened with leaselab's DSN, over messages whose bodies are
// leaselab's payloads.
func runGoqite(b *testing.B, r run) {
	msgs, queued := r.sizes(b)
	workers := newGoqite(b, r, queued+msgs)
	ctx := context.Background()
	runWorkers(b, msgs, r.workers, waitSQLite, func(w int, left *budget, st *workerStats) error {
		return workers[w].loop(ctx, r.payment, left, st)
	})
}

// goqiteWorker is one goqite worker: a queue on a connection of its own.
type goqiteWorker struct {
	q    *goqite.Queue
	pool *sql.DB
}

// newGoqite creates a goqite database in tb's temp folder with total messages (and with
// r.payment, leaselab's Payments table and rows), checkpoints it, and opens r.workers workers.
func newGoqite(tb testing.TB, r run, total int) []goqiteWorker {
	tb.Helper()
	ctx := context.Background()
	path := filepath.Join(tb.TempDir(), "goqite.db")
	admin, err := openPool(path, false, 1)
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	schema := goqiteSchema(tb)
	if r.payment {
		schema += "\n" + paymentsDDL(tb)
	}
	if _, err := admin.ExecContext(ctx, schema); err != nil {
		tb.Fatal(err)
	}
	q := goqite.New(goqite.NewOpts{DB: admin, Name: "bench", Timeout: time.Hour})
	err = runTx(ctx, admin, func(tx *sql.Tx) error {
		for i := 1; i <= total; i++ {
			p := engine.SeedPayment(i, total, benchT0)
			if err := q.SendTx(ctx, tx, goqite.Message{Body: []byte(p.Payload)}); err != nil {
				return err
			}
			if !r.payment {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO Payments (IdempotencyKey, Amount, CreatedAtUtc) VALUES (?, ?, ?)`,
				p.Key, p.Amount, FormatTime(p.CreatedAt)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		tb.Fatal(err)
	}
	workers := make([]goqiteWorker, r.workers)
	for i := range workers {
		c, err := openPool(path, true, 1)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { c.Close() })
		workers[i] = goqiteWorker{q: goqite.New(goqite.NewOpts{DB: c, Name: "bench", Timeout: time.Hour}), pool: c}
	}
	return workers
}

// loop receives and deletes messages until the budget is spent; with payment, the Delete
// updates the message's payment in its transaction.
func (g goqiteWorker) loop(ctx context.Context, payment bool, left *budget, st *workerStats) error {
	for left.take(1) == 1 {
		var m *goqite.Message
		if err := st.timed(func() (err error) { m, err = g.q.Receive(ctx); return err }); err != nil {
			return err
		}
		if m == nil {
			return errors.New("goqite: queue empty")
		}
		del := func() error { return g.q.Delete(ctx, m.ID) }
		if payment {
			del = func() error { return goqiteFinalize(ctx, g.pool, g.q, m) }
		}
		if err := st.timed(del); err != nil {
			return err
		}
		st.done++
	}
	return nil
}

// goqiteFinalize updates the message's payment and deletes the message in one transaction, as a
// goqite user would (DeleteTx).
func goqiteFinalize(ctx context.Context, db *sql.DB, q *goqite.Queue, m *goqite.Message) error {
	var body struct{ IdempotencyKey string }
	if err := json.Unmarshal(m.Body, &body); err != nil {
		return err
	}
	return runTx(ctx, db, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE Payments SET PaymentStatus = ?, TransactionId = ? WHERE IdempotencyKey = ?`,
			engine.PaymentPaid, "txn_"+body.IdempotencyKey, body.IdempotencyKey)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("payment %s: %d rows, %v", body.IdempotencyKey, n, err)
		}
		return q.DeleteTx(ctx, tx, m.ID)
	})
}

// paymentsDDL is leaselab's CREATE TABLE Payments, from schema.sql.
func paymentsDDL(tb testing.TB) string {
	start := strings.Index(schemaSQL, "CREATE TABLE Payments")
	end := strings.Index(schemaSQL[start:], ");")
	if start < 0 || end < 0 {
		tb.Fatal("schema.sql has no CREATE TABLE Payments")
	}
	return schemaSQL[start : start+end+2]
}

// workerStats is what one benchmark worker did.
type workerStats struct {
	done  int             // messages finalized (goqite: deleted)
	calls []time.Duration // every transaction call, from asking to done (waits included)
	// retryBusy retries a call that failed with engine.ErrBusy after a short random sleep.
	retryBusy bool
}

func (s *workerStats) timed(f func() error) error {
	start := time.Now()
	err := f()
	for s.retryBusy && errors.Is(err, engine.ErrBusy) {
		time.Sleep(retrySleepMin + rand.N(retrySleepJitter))
		err = f()
	}
	s.calls = append(s.calls, time.Since(start))
	return err
}

// budget hands out the b.N messages of a run to the workers.
type budget struct{ left atomic.Int64 }

// take reserves up to n messages and returns how many it got (0: the run is over).
func (b *budget) take(n int) int {
	for {
		left := b.left.Load()
		if left <= 0 {
			return 0
		}
		got := min(int64(n), left)
		if b.left.CompareAndSwap(left, left-got) {
			return int(got)
		}
	}
}

// runWorkers runs work on n workers at once until msgs messages are done, times the whole run
// and reports the metrics.
func runWorkers(b *testing.B, msgs, n int, wait waitMode, work func(w int, left *budget, st *workerStats) error) {
	b.Helper()
	var left budget
	left.left.Store(int64(msgs))
	stats := make([]workerStats, n)
	for i := range stats {
		stats[i].retryBusy = wait == waitRetry
		stats[i].calls = make([]time.Duration, 0, 2*msgs/n+2)
	}
	var (
		cpu0 time.Duration
		t    time.Time
	)
	errs := storetest.AtOnce(n, func() {
		runtime.GC() // the setup's garbage is not the run's
		b.ResetTimer()
		cpu0 = processCPU()
		t = time.Now()
	}, func(w int) error { return work(w, &left, &stats[w]) })
	elapsed := time.Since(t)
	cpu := processCPU() - cpu0
	b.StopTimer()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	total, least := 0, msgs
	var calls []time.Duration
	for _, s := range stats {
		total += s.done
		least = min(least, s.done)
		calls = append(calls, s.calls...)
	}
	if total != msgs {
		b.Fatalf("%d messages done, want %d", total, msgs)
	}
	slices.Sort(calls)
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(total), "ns/op")
	b.ReportMetric(float64(total)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(ms(calls[len(calls)-1]), "max-wait-ms")
	b.ReportMetric(ms(calls[len(calls)*99/100]), "p99-wait-ms")
	b.ReportMetric(100*float64(least)/float64(total), "min-share-%")
	b.ReportMetric(float64(cpu.Nanoseconds())/1000/float64(total), "cpu-us/msg")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// processCPU is the CPU time (user + system) this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
