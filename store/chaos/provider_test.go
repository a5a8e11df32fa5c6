package chaos

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// ledger is the harness's own database (a SQLite file beside the runs, never on the disk the
// faults fill): every provider call as the provider received it, every completion (payment
// write) as a witness saw it, and every message's state after the run. The counts of the table
// are queries over it (count_test.go).
type ledger struct {
	mu sync.Mutex // one writer at a time: the provider's handlers and the witnesses
	db *sql.DB
}

const ledgerSchema = `
CREATE TABLE calls (      -- one per provider call, written before the provider answers
  id      INTEGER PRIMARY KEY,
  run     TEXT NOT NULL,
  key     TEXT NOT NULL,
  attempt INTEGER NOT NULL, -- the caller's lease version (leaselab), job attempt (River), receive count (goqite)
  worker  TEXT NOT NULL,
  at_ns   INTEGER NOT NULL
);
CREATE INDEX calls_run_key ON calls (run, key);
CREATE TABLE writes (     -- one per committed payment write (completion), as its witness saw it
  run     TEXT NOT NULL,
  key     TEXT NOT NULL,
  attempt INTEGER NOT NULL, -- the writer's attempt
  worker  TEXT NOT NULL,
  current INTEGER NULL,     -- the message's newest attempt, read in the write's own transaction
                            -- (-1: the message was gone); NULL when the witness cannot read it there
  owned   INTEGER NULL,     -- whether the writer still owned the message there (1, 0; NULL: unknown)
  witness TEXT NOT NULL
);
CREATE INDEX writes_run_key ON writes (run, key);
CREATE TABLE finals (     -- every message after the run
  run       TEXT NOT NULL,
  key       TEXT NOT NULL,
  completed INTEGER NOT NULL,
  dead      INTEGER NOT NULL, -- not completed, and the system will never run it again
  attempt   INTEGER NULL,     -- its newest attempt, when the system still has it
  txid      TEXT NULL,        -- the payment's transaction id
  state     TEXT NOT NULL
);
CREATE INDEX finals_run_key ON finals (run, key);
`

func openLedger(t *testing.T, dir string) *ledger {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "ledger.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(ledgerSchema); err != nil {
		t.Fatal(err)
	}
	return &ledger{db: db}
}

// call records one provider call and returns its id.
func (l *ledger) call(run, key string, attempt int64, worker string) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, err := l.db.Exec(`INSERT INTO calls (run, key, attempt, worker, at_ns) VALUES (?, ?, ?, ?, ?)`,
		run, key, attempt, worker, time.Now().UnixNano())
	if err != nil {
		return 0, err
	}
	return r.LastInsertId()
}

// write records one committed payment write; current and owned are nil when the witness could
// not read, in the write's transaction, the message's newest attempt and whether the writer
// still owned it.
func (l *ledger) write(run, key string, attempt int64, worker string, current *int64, owned *bool, witness string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.db.Exec(`INSERT INTO writes (run, key, attempt, worker, current, owned, witness) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		run, key, attempt, worker, current, owned, witness)
	return err
}

// writeOnce records a payment write unless one by the same attempt of the same worker is
// recorded: a second witness of a write already seen.
func (l *ledger) writeOnce(run, key string, attempt int64, worker, witness string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.db.Exec(`INSERT INTO writes (run, key, attempt, worker, current, witness)
SELECT ?, ?, ?, ?, NULL, ? WHERE NOT EXISTS (SELECT 1 FROM writes WHERE run = ? AND key = ? AND attempt = ? AND worker = ?)`,
		run, key, attempt, worker, witness, run, key, attempt, worker)
	return err
}

// witnessed counts a run's writes the workers' lines told of, and those of them no other
// witness saw.
func (l *ledger) witnessed(run string) (lines, unseen int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	err = l.db.QueryRow(`SELECT count(*), count(CASE WHEN NOT EXISTS (SELECT 1 FROM writes v WHERE v.run = w.run AND v.key = w.key
         AND v.attempt = w.attempt AND v.worker = w.worker AND v.witness <> w.witness) THEN 1 END)
  FROM writes w WHERE run = ? AND witness = 'worker output'`, run).Scan(&lines, &unseen)
	return lines, unseen, err
}

// onlyFrom counts a run's writes that witness alone saw.
func (l *ledger) onlyFrom(run, witness string) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int
	err := l.db.QueryRow(`SELECT count(*) FROM writes WHERE run = ? AND witness = ?`, run, witness).Scan(&n)
	return n, err
}

func (l *ledger) final(run, key string, completed, dead bool, attempt *int64, txid *string, state string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.db.Exec(`INSERT INTO finals (run, key, completed, dead, attempt, txid, state) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		run, key, completed, dead, attempt, txid, state)
	return err
}

// callByTxid finds the call whose answer carried txid.
func (l *ledger) callByTxid(run, txid string) (attempt int64, worker string, ok bool) {
	var id int64
	if _, err := fmt.Sscanf(txid[strings.LastIndexByte(txid, '-')+1:], "c%d", &id); err != nil {
		return 0, "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.db.QueryRow(`SELECT attempt, worker FROM calls WHERE id = ? AND run = ?`, id, run).Scan(&attempt, &worker)
	return attempt, worker, err == nil
}

// provider is the payment provider every system's workers call over HTTP: POST
// /RUN/ {"key", "worker", "lease_version"} (leaselab's worker --provider; the River and goqite
// worker programs send the same, the job attempt or receive count as lease_version). It writes
// the call into the ledger first, then takes latency to answer Paid with a transaction id naming
// the call (RUN-cID), so a payment tells which call it came from.
type provider struct {
	srv     *httptest.Server
	led     *ledger
	latency time.Duration
}

// callBody is what a worker sends the provider.
type callBody struct {
	Key          string `json:"key"`
	Worker       string `json:"worker"`
	LeaseVersion int64  `json:"lease_version"`
}

func startProvider(t *testing.T, led *ledger, latency time.Duration) *provider {
	p := &provider{led: led, latency: latency}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// url is where a run's workers call.
func (p *provider) url(run string) string { return p.srv.URL + "/" + run + "/" }

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	run := strings.Trim(r.URL.Path, "/")
	var c callBody
	if r.Method != http.MethodPost || run == "" || json.NewDecoder(r.Body).Decode(&c) != nil || c.Key == "" {
		http.Error(w, "bad call", http.StatusBadRequest)
		return
	}
	id, err := p.led.call(run, c.Key, c.LeaseVersion, c.Worker)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	select {
	case <-time.After(p.latency):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"status": "Paid", "transaction_id": fmt.Sprintf("%s-c%d", run, id)})
}

// callProvider is the River and goqite workers' provider call: what leaselab's worker
// --provider sends, with attempt as the lease version.
func callProvider(ctx context.Context, client *http.Client, url, key, worker string, attempt int64) (string, error) {
	body, _ := json.Marshal(callBody{Key: key, Worker: worker, LeaseVersion: attempt})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("provider answered %s", resp.Status)
	}
	var a struct {
		TransactionID string `json:"transaction_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return "", err
	}
	return a.TransactionID, nil
}
