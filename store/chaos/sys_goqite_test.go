package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"maragu.dev/goqite"
)

// goqite v0.4.0 on a SQLite file: worker processes of a small program (this test binary, started
// with CHAOS_WORKER=goqite), each slots goroutines that receive, call the provider, and delete
// the message in one transaction with the payment: goqite's own loop, on its defaults but the
// visibility timeout, set to leaselab's lease.
type goqiteSys struct{}

// goqiteMaxReceive is goqite's default MaxReceive: a message received this many times is never
// received again.
const goqiteMaxReceive = 3

// goqiteQueue is the queue's name.
const goqiteQueue = "chaos"

func (goqiteSys) name() string { return "goqite" }

func (goqiteSys) applies(f fault, h *harness) (bool, string) {
	switch f {
	case faultTerminate, faultRestart:
		return false, "no server: SQLite is a file"
	case faultSkew:
		return false, "goqite takes no clock offset: it reads the process's own clock, which the harness cannot move"
	case faultDiskFull:
		if h.tmpfs == "" {
			return false, h.noTmpfs
		}
	}
	return true, ""
}

func (goqiteSys) stopFor() time.Duration  { return lease + 2*time.Second }
func (goqiteSys) drainFor() time.Duration { return 30 * time.Second }

func (goqiteSys) settings() string {
	return fmt.Sprintf("goqite v0.4.0 on a SQLite file (WAL, busy_timeout 5s, BEGIN IMMEDIATE); Timeout %s (default 5s), MaxReceive %d (the default); per process %d goroutines, each: `ReceiveTx` (and the message's receive count, read in the same transaction), the provider call, then in one transaction the payment's UPDATE and `DeleteTx`; poll 25ms when empty; %d processes",
		lease, goqiteMaxReceive, slots, workers)
}

// goqiteSchema is maragu.dev/goqite v0.4.0's schema_sqlite.sql (kept in store/testdata for
// store's benchmarks too), then the workload's payments.
func goqiteSchema() (string, error) {
	b, err := os.ReadFile("../testdata/goqite_schema_sqlite.sql")
	return string(b) + `
create table payments (key text primary key, status text not null default 'Pending', txid text);
create table payment_writes (
  id integer primary key, key text not null, attempt integer not null, current_attempt integer,
  worker text not null, txid text not null);`, err
}

func (goqiteSys) path(r *run) string { return filepath.Join(r.disk, "goqite.db") }

// goqiteDSN opens the file as leaselab's store does.
func goqiteDSN(path string) string {
	return "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

func (s goqiteSys) prepare(ctx context.Context, r *run) error {
	db, err := sql.Open("sqlite", goqiteDSN(s.path(r)))
	if err != nil {
		return err
	}
	defer db.Close()
	schema, err := goqiteSchema()
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return err
	}
	q := goqite.New(goqite.NewOpts{DB: db, Name: goqiteQueue, Timeout: lease})
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, k := range keys() {
		if _, err := tx.ExecContext(ctx, `insert into payments (key) values (?)`, k); err != nil {
			return err
		}
		if err := q.SendTx(ctx, tx, goqite.Message{Body: []byte(k)}); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s goqiteSys) command(r *run, w *worker, _ time.Duration) *exec.Cmd {
	return workerProgram("goqite", s.path(r), r.h.prov.url(r.id), w.name)
}

func (goqiteSys) onLine(*run, *worker, string) {}

func (s goqiteSys) query(ctx context.Context, r *run, q string, fn func(scanFunc) error) error {
	return querySQLite(ctx, s.path(r), q, fn)
}

// progress: a message is completed once deleted; one received MaxReceive times, and not
// received for a while (its last holder's timeout long over), is never received again.
func (s goqiteSys) progress(ctx context.Context, r *run) (done, dead int, err error) {
	var left int
	err = s.query(ctx, r, fmt.Sprintf(`select count(*), count(case when received >= %d and timeout < strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', 'now', '-5 seconds') then 1 end) from goqite`, goqiteMaxReceive),
		func(scan scanFunc) error { return scan(&left, &dead) })
	return messages - left, dead, err
}

func (s goqiteSys) collect(ctx context.Context, r *run) error {
	err := s.query(ctx, r, `select p.key, g.received, p.txid from payments p left join goqite g on g.body = cast(p.key as blob)`, func(scan scanFunc) error {
		var (
			key      string
			received *int64
			txid     *string
		)
		if err := scan(&key, &received, &txid); err != nil {
			return err
		}
		state := "deleted"
		if received != nil {
			state = fmt.Sprintf("received %d times", *received)
		}
		return r.h.led.final(r.id, key, received == nil, received != nil && *received >= goqiteMaxReceive, received, txid, state)
	})
	if err != nil {
		return err
	}
	return s.query(ctx, r, `select key, attempt, current_attempt, worker from payment_writes`, func(scan scanFunc) error {
		var (
			key, worker      string
			attempt, current int64
		)
		if err := scan(&key, &attempt, &current, &worker); err != nil {
			return err
		}
		// The writer owned the message when it was still there, received last by this attempt.
		owned := current == attempt
		if !owned {
			r.note("%s paid and deleted by receive %d of %s while the message was at receive %d (-1: already deleted)", key, attempt, worker, current)
		}
		return r.h.led.write(r.id, key, attempt, worker, &current, &owned, "payment_writes, in the completion's transaction")
	})
}

// runGoqiteWorker is the goqite worker program: slots goroutines until SIGTERM.
func runGoqiteWorker() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	lg := log.New(os.Stderr, "", 0)
	db, err := sql.Open("sqlite", goqiteDSN(os.Getenv("CHAOS_DB")))
	if err != nil {
		lg.Print(err)
		return 1
	}
	defer db.Close()
	db.SetMaxOpenConns(slots)
	q := goqite.New(goqite.NewOpts{DB: db, Name: goqiteQueue, Timeout: lease})
	name, url := os.Getenv("CHAOS_NAME"), os.Getenv("CHAOS_PROVIDER")
	client := &http.Client{Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	for range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				worked, err := goqiteOnce(ctx, db, q, client, url, name)
				if err != nil {
					lg.Printf("%s: %v", name, err)
				}
				if !worked {
					select {
					case <-ctx.Done():
					case <-time.After(25 * time.Millisecond):
					}
				}
			}
		}()
	}
	wg.Wait()
	return 0
}

// goqiteOnce receives one message, calls the provider, and completes it: the payment and the
// delete in one transaction, with the witness's row (the writer's receive count, and the one
// the message has now, -1 when it is gone).
func goqiteOnce(ctx context.Context, db *sql.DB, q *goqite.Queue, client *http.Client, url, name string) (bool, error) {
	var (
		m        *goqite.Message
		received int64
	)
	err := inTx(ctx, db, func(tx *sql.Tx) (err error) {
		if m, err = q.ReceiveTx(ctx, tx); err != nil || m == nil {
			return err
		}
		return tx.QueryRowContext(ctx, `select received from goqite where id = ?`, m.ID).Scan(&received)
	})
	if err != nil || m == nil {
		return false, err
	}
	key := string(m.Body)
	txid, err := callProvider(ctx, client, url, key, name, received)
	if err != nil {
		return true, fmt.Errorf("%s: provider: %w", key, err)
	}
	// Once called, the message is completed even when a SIGTERM comes meanwhile.
	cctx := context.WithoutCancel(ctx)
	return true, inTx(cctx, db, func(tx *sql.Tx) error {
		current := int64(-1)
		if err := tx.QueryRow(`select received from goqite where id = ?`, m.ID).Scan(&current); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(`insert into payment_writes (key, attempt, current_attempt, worker, txid) values (?, ?, ?, ?, ?)`,
			key, received, current, name, txid); err != nil {
			return err
		}
		if _, err := tx.Exec(`update payments set status = 'Paid', txid = ? where key = ?`, txid, key); err != nil {
			return err
		}
		return q.DeleteTx(cctx, tx, m.ID)
	})
}

func inTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
