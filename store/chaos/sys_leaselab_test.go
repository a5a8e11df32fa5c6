package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// leaselab is the hosted worker: worker processes of `leaselab worker --slots`, built from this
// repository, on PostgreSQL or on a SQLite file.
type leaselab struct{ postgres bool }

func (s leaselab) name() string {
	if s.postgres {
		return "leaselab PostgreSQL"
	}
	return "leaselab SQLite"
}

func (s leaselab) applies(f fault, h *harness) (bool, string) {
	switch {
	case f == faultTerminate || f == faultRestart:
		if !s.postgres {
			return false, "no server: SQLite is a file"
		}
	case f == faultDiskFull:
		if s.postgres {
			return false, "the server's disk is not filled (its data folder is not on the tmpfs)"
		}
		if h.tmpfs == "" {
			return false, h.noTmpfs
		}
	}
	return true, ""
}

func (leaselab) stopFor() time.Duration  { return lease + 2*time.Second }
func (leaselab) drainFor() time.Duration { return 30 * time.Second }

func (s leaselab) settings() string {
	return fmt.Sprintf("`leaselab worker --slots %d --lease %s --until-empty=false --provider URL` (heartbeat every %s, poll 25ms); %d processes",
		slots, lease, lease*2/5, workers)
}

// db is what --db names: the run's database on the server (leaselab's schema "chaos"), or the
// run's file.
func (s leaselab) db(r *run) string {
	if s.postgres {
		return r.h.pg.url(r.pgDB, false) + "&schema=chaos"
	}
	return filepath.Join(r.disk, "leaselab.db")
}

func (s leaselab) prepare(ctx context.Context, r *run) error {
	if s.postgres {
		if err := r.h.pg.createDB(ctx, r.pgDB); err != nil {
			return err
		}
	}
	out, err := exec.CommandContext(ctx, r.h.bin, "seed", "--db", s.db(r), "--messages", strconv.Itoa(messages)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("leaselab seed: %v\n%s", err, out)
	}
	if s.postgres {
		return startWAL(ctx, r)
	}
	return nil
}

func (s leaselab) command(r *run, w *worker, skew time.Duration) *exec.Cmd {
	args := []string{"worker", "--db", s.db(r), "--name", w.name, "--slots", strconv.Itoa(slots),
		"--lease", lease.String(), "--until-empty=false", "--provider", r.h.prov.url(r.id)}
	if skew != 0 {
		args = append(args, "--skew", fmt.Sprintf("%+dms", skew.Milliseconds()))
	}
	return exec.Command(r.h.bin, args...)
}

// committedRE is a hosted worker's line for a finalize that committed: its key, owner and
// lease version.
var committedRE = regexp.MustCompile(`^\S+ (\S+) finalized (\S+): .*WHERE LockedBy=(\S+) AND LeaseVersion=(\d+), 1 row\), committed$`)

// onLine takes the worker's own word for each finalize that committed (the database's rows
// affected, said after the commit): the witness of leaselab's payment writes, with the
// payment's transaction id in the row after the run (collect) for a line a SIGKILL cut off.
func (s leaselab) onLine(r *run, w *worker, line string) {
	m := committedRE.FindStringSubmatch(line)
	if m == nil {
		return
	}
	v, _ := strconv.ParseInt(m[4], 10, 64)
	if err := r.h.led.write(r.id, m[2], v, m[3], nil, nil, "worker output"); err != nil {
		r.logf("ledger: %v", err)
	}
}

// query runs fn on a connection of the harness's own to the run's database (spared by the
// faults' pg_terminate_backend; read-only on the file).
func (s leaselab) query(ctx context.Context, r *run, q string, fn func(scanFunc) error) error {
	if s.postgres {
		return queryPostgres(ctx, r.h.pg.url(r.pgDB, true)+"&search_path=chaos", q, fn)
	}
	return querySQLite(ctx, s.db(r), q, fn)
}

func (s leaselab) progress(ctx context.Context, r *run) (done, dead int, err error) {
	err = s.query(ctx, r, `SELECT count(CASE WHEN Status = 'Processed' THEN 1 END), count(CASE WHEN Status = 'DeadLettered' THEN 1 END) FROM OutboxMessages`,
		func(scan scanFunc) error { return scan(&done, &dead) })
	return done, dead, err
}

func (s leaselab) collect(ctx context.Context, r *run) error {
	if s.postgres {
		n, err := readWAL(ctx, r)
		if err != nil {
			return err
		}
		lines, unseen, err := r.h.led.witnessed(r.id)
		if err != nil {
			return err
		}
		if unseen > 0 || lines != n {
			r.note("the WAL holds %d committed payment writes; the workers' lines told of %d, %d of them not in the WAL", n, lines, unseen)
		}
	}
	type row struct {
		key, status string
		version     int64
		owner, txid sql.NullString
	}
	var rows []row
	err := s.query(ctx, r, `SELECT o.IdempotencyKey, o.Status, o.LeaseVersion, o.LockedBy, p.TransactionId
  FROM OutboxMessages o JOIN Payments p ON p.IdempotencyKey = o.IdempotencyKey`, func(scan scanFunc) error {
		var x row
		if err := scan(&x.key, &x.status, &x.version, &x.owner, &x.txid); err != nil {
			return err
		}
		rows = append(rows, x)
		return nil
	})
	if err != nil {
		return err
	}
	for _, x := range rows {
		var txid *string
		if x.txid.Valid {
			txid = &x.txid.String
			// The payment in the row is a write too: the call that made its transaction id
			// tells whose. One the worker's output did not tell of (a SIGKILL between the commit
			// and the line) is counted from here.
			attempt, worker, ok := r.h.led.callByTxid(r.id, x.txid.String)
			if !ok {
				return fmt.Errorf("%s: transaction id %q came from no call of this run", x.key, x.txid.String)
			}
			if err := r.h.led.writeOnce(r.id, x.key, attempt, worker, "the payment row"); err != nil {
				return err
			}
		}
		v := x.version
		if err := r.h.led.final(r.id, x.key, x.status == "Processed", x.status == "DeadLettered", &v, txid, x.status); err != nil {
			return err
		}
	}
	if !s.postgres {
		if n, err := r.h.led.onlyFrom(r.id, "the payment row"); err != nil {
			return err
		} else if n > 0 {
			r.note("%d payment %s seen in the payment row only: the worker's line, printed after the commit, was cut by a SIGKILL", n, plural(n, "write", "writes"))
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
