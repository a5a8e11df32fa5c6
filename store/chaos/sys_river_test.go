package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"leaselab/engine"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// River v0.51.2 (riverpgxv5) on PostgreSQL: worker processes of a small program (this test
// binary, started with CHAOS_WORKER=river), each a River client on River's defaults but two:
// the job timeout and the rescuer's threshold, shortened to fit a run of seconds.
type riverSys struct{}

const (
	// riverJobTimeout is River's JobTimeout (default 1 minute): a job's context is cancelled
	// after it. riverRescueAfter is RescueStuckJobsAfter (default 1 hour; it must not be less
	// than JobTimeout): a job running longer is rescued, retried by another client. It equals
	// leaselab's lease.
	riverJobTimeout  = time.Second
	riverRescueAfter = lease
	// riverRescuerEvery is how often River's rescuer runs (JobRescuerIntervalDefault, 30 s,
	// which River's Config does not expose): a stuck job waits up to this long past
	// riverRescueAfter, then its retry's backoff.
	riverRescuerEvery = 30 * time.Second
)

func (riverSys) name() string { return "River" }

func (riverSys) applies(f fault, h *harness) (bool, string) {
	switch f {
	case faultDiskFull:
		return false, "the server's disk is not filled (its data folder is not on the tmpfs)"
	case faultSkew:
		return false, "River takes no clock offset: its leader's rescuer reads the process's own clock, which the harness cannot move"
	}
	return true, ""
}

// stopFor: past RescueStuckJobsAfter and a whole rescuer interval, so that the rescuer runs
// while the worker sleeps.
func (riverSys) stopFor() time.Duration { return riverRescueAfter + riverRescuerEvery + 2*time.Second }

// drainFor: a rescue can wait a rescuer interval, then the retry's backoff (1 s after a first
// attempt, 16 s after a second) and the scheduler's 5 s.
func (riverSys) drainFor() time.Duration { return 75 * time.Second }

func (riverSys) settings() string {
	return fmt.Sprintf("River v0.51.2, riverpgxv5; per process one client, queue `default` with MaxWorkers %d; JobTimeout %s (default 1m), RescueStuckJobsAfter %s (default 1h); everything else River's default (rescuer every 30s, FetchPollInterval 1s, FetchCooldown 100ms, MaxAttempts 25, retry backoff attempt⁴ s, scheduler every 5s); each job: the provider call, then in one transaction the payment's UPDATE and `river.JobCompleteTx`, as River's example of completing a job in a transaction; %d processes",
		slots, riverJobTimeout, riverRescueAfter, workers)
}

// riverArgs is the job: one payment status check.
type riverArgs struct {
	Key string `json:"key"`
}

func (riverArgs) Kind() string { return "chaos_payment" }

const riverTables = `
CREATE TABLE payments (key text PRIMARY KEY, status text NOT NULL DEFAULT 'Pending', txid text);
CREATE TABLE payment_writes (
  id bigserial PRIMARY KEY, key text NOT NULL, attempt int NOT NULL, current_attempt int,
  current_state text, after_state text, worker text NOT NULL, txid text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp());`

func (riverSys) prepare(ctx context.Context, r *run) error {
	if err := r.h.pg.createDB(ctx, r.pgDB); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, r.h.pg.url(r.pgDB, true))
	if err != nil {
		return err
	}
	defer pool.Close()
	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrate: %w", err)
	}
	if _, err := pool.Exec(ctx, riverTables); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `INSERT INTO payments (key) SELECT unnest($1::text[])`, keys()); err != nil {
		return err
	}
	client, err := river.NewClient(driver, &river.Config{}) // inserts only
	if err != nil {
		return err
	}
	params := make([]river.InsertManyParams, messages)
	for i, k := range keys() {
		params[i] = river.InsertManyParams{Args: riverArgs{Key: k}}
	}
	_, err = client.InsertManyFast(ctx, params)
	return err
}

// keys are the messages' idempotency keys, as leaselab seeds them.
func keys() []string {
	ks := make([]string, messages)
	for i := range ks {
		ks[i] = engine.MessageKey(i + 1)
	}
	return ks
}

func (riverSys) command(r *run, w *worker, _ time.Duration) *exec.Cmd {
	return workerProgram("river", r.h.pg.url(r.pgDB, false), r.h.prov.url(r.id), w.name)
}

func (riverSys) onLine(*run, *worker, string) {}

func (riverSys) query(ctx context.Context, r *run, q string, fn func(scanFunc) error) error {
	return queryPostgres(ctx, r.h.pg.url(r.pgDB, true), q, fn)
}

func (s riverSys) progress(ctx context.Context, r *run) (done, dead int, err error) {
	err = s.query(ctx, r, `SELECT count(*) FILTER (WHERE state = 'completed'), count(*) FILTER (WHERE state IN ('discarded', 'cancelled')) FROM river_job`,
		func(scan scanFunc) error { return scan(&done, &dead) })
	return done, dead, err
}

func (s riverSys) collect(ctx context.Context, r *run) error {
	err := s.query(ctx, r, `SELECT j.args->>'key', j.state::text, j.attempt, p.txid
  FROM river_job j JOIN payments p ON p.key = j.args->>'key'`, func(scan scanFunc) error {
		var (
			key, state string
			attempt    int64
			txid       *string
		)
		if err := scan(&key, &state, &attempt, &txid); err != nil {
			return err
		}
		return r.h.led.final(r.id, key, state == "completed", state == "discarded" || state == "cancelled", &attempt, txid, state)
	})
	if err != nil {
		return err
	}
	return s.query(ctx, r, `SELECT key, attempt, current_attempt, current_state, after_state, worker FROM payment_writes`, func(scan scanFunc) error {
		var (
			key, state, after, worker string
			attempt, current          int64
		)
		if err := scan(&key, &attempt, &current, &state, &after, &worker); err != nil {
			return err
		}
		// The writer owned the job when the job was running this attempt.
		owned := state == "running" && current == attempt
		if !owned {
			r.note("%s paid by attempt %d of %s while the job was %s at attempt %d; JobCompleteTx returned it %s, without an error", key, attempt, worker, state, current, after)
		}
		return r.h.led.write(r.id, key, attempt, worker, &current, &owned, "payment_writes, in the completion's transaction")
	})
}

// workerProgram is the command line of a River or goqite worker process: this test binary,
// which TestMain turns into the worker program.
func workerProgram(kind, db, providerURL, name string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CHAOS_WORKER="+kind, "CHAOS_DB="+db, "CHAOS_PROVIDER="+providerURL, "CHAOS_NAME="+name)
	return cmd
}

// riverWorker is one job's work: the provider call, then the payment and the job's completion
// in one transaction. The payment_writes row, in the same transaction, is the harness's witness:
// it records the writer's attempt and the job's newest attempt as the transaction sees it.
type riverWorker struct {
	river.WorkerDefaults[riverArgs]
	pool     *pgxpool.Pool
	client   *http.Client
	provider string
	name     string
}

func (w *riverWorker) Work(ctx context.Context, job *river.Job[riverArgs]) error {
	txid, err := callProvider(ctx, w.client, w.provider, job.Args.Key, w.name, int64(job.Attempt))
	if err != nil {
		return err
	}
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	current, state := int64(-1), "gone"
	if err := tx.QueryRow(ctx, `SELECT attempt, state::text FROM river_job WHERE id = $1 FOR UPDATE`, job.ID).Scan(&current, &state); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO payment_writes (key, attempt, current_attempt, current_state, worker, txid) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		job.Args.Key, job.Attempt, current, state, w.name, txid).Scan(&id); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE payments SET status = 'Paid', txid = $2 WHERE key = $1`, job.Args.Key, txid); err != nil {
		return err
	}
	after, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
	if err != nil {
		return err
	}
	// What JobCompleteTx gave back: "completed", or the state of a job it did not complete.
	if _, err := tx.Exec(ctx, `UPDATE payment_writes SET after_state = $2 WHERE id = $1`, id, string(after.State)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// runRiverWorker is the River worker program: one client until SIGTERM.
func runRiverWorker() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pool, err := pgxpool.New(ctx, os.Getenv("CHAOS_DB"))
	if err != nil {
		log.Error("pool", "err", err)
		return 1
	}
	defer pool.Close()
	name := os.Getenv("CHAOS_NAME")
	ws := river.NewWorkers()
	river.AddWorker(ws, &riverWorker{pool: pool, client: &http.Client{Timeout: 30 * time.Second}, provider: os.Getenv("CHAOS_PROVIDER"), name: name})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		ID:                   name + "-" + strconv.Itoa(os.Getpid()),
		Logger:               log,
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: slots}},
		Workers:              ws,
		JobTimeout:           riverJobTimeout,
		RescueStuckJobsAfter: riverRescueAfter,
	})
	if err != nil {
		log.Error("client", "err", err)
		return 1
	}
	if err := client.Start(ctx); err != nil {
		log.Error("start", "err", err)
		return 1
	}
	<-ctx.Done()
	end, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Stop(end); err != nil {
		log.Error("stop", "err", err)
		return 1
	}
	return 0
}
