package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The server's own witness of leaselab's payment writes on PostgreSQL: a logical replication
// slot (test_decoding) made in the run's database before the workers start, read after the run.
// It holds every committed change in commit order, and nothing a transaction rolled back, so it
// sees each committed payment write — with its transaction id, which names the provider call
// that made it — and the message's lease version as of that commit, whatever the workers printed
// or were killed before printing.

// walSlot is the run's slot name.
func walSlot(r *run) string { return "chaos_" + r.id }

// startWAL makes the run's slot.
func startWAL(ctx context.Context, r *run) error {
	conn, err := pgx.Connect(ctx, r.h.pg.url(r.pgDB, true))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE TABLE public.chaos_marker (n int)`)
	if err == nil {
		_, err = conn.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'test_decoding')`, walSlot(r))
	}
	return err
}

// walColumn is one column of a row test_decoding prints: name[type]:value, the value quoted
// when it is text.
var walColumn = regexp.MustCompile(`(\w+)\[[^\]]*\]:('(?:[^']|'')*'|\S+)`)

func walColumns(s string) map[string]string {
	cols := map[string]string{}
	for _, m := range walColumn.FindAllStringSubmatch(s, -1) {
		v := m[2]
		if strings.HasPrefix(v, "'") {
			v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
		}
		cols[m[1]] = v
	}
	return cols
}

// walChanges takes the slot's changes decoded so far.
func walChanges(ctx context.Context, conn *pgx.Conn, slot string) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT data FROM pg_logical_slot_get_changes($1, NULL, NULL)`, slot)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// readWAL reads the slot's changes, records every committed payment write in the ledger with
// the message's lease version as of its commit, drops the slot, and returns how many writes it
// saw.
func readWAL(ctx context.Context, r *run) (int, error) {
	conn, err := pgx.Connect(ctx, r.h.pg.url(r.pgDB, true))
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	// A slot decodes a commit some time after it is flushed. A marker row committed now (after
	// the workers have ended) comes after every payment write in commit order: once it is
	// decoded, so is everything before it.
	if _, err := conn.Exec(ctx, `BEGIN; SET LOCAL synchronous_commit = on; INSERT INTO public.chaos_marker VALUES (1); COMMIT`); err != nil {
		return 0, err
	}
	var lines []string
	for give := time.Now().Add(30 * time.Second); ; {
		got, err := walChanges(ctx, conn, walSlot(r))
		if err != nil {
			return 0, err
		}
		lines = append(lines, got...)
		if slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, "table public.chaos_marker: INSERT") }) {
			break
		}
		if time.Now().After(give) {
			return 0, errors.New("WAL: the marker was not decoded within 30s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	os.WriteFile(filepath.Join(r.dir, "wal.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	if _, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, walSlot(r)); err != nil {
		return 0, err
	}
	version := map[string]int64{} // each message's lease version as of the last commit read
	type write struct{ key, txid string }
	var (
		tx     []write
		txVer  = map[string]int64{}
		writes int
	)
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "BEGIN"):
			tx, txVer = nil, map[string]int64{}
		case strings.HasPrefix(l, "table chaos.outboxmessages: UPDATE:"):
			c := walColumns(l)
			v, err := strconv.ParseInt(c["leaseversion"], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("WAL: outbox row without a lease version: %s", l)
			}
			txVer[c["idempotencykey"]] = v
		case strings.HasPrefix(l, "table chaos.payments: UPDATE:"):
			c := walColumns(l)
			if txid := c["transactionid"]; txid != "" && txid != "null" {
				tx = append(tx, write{c["idempotencykey"], txid})
			}
		case strings.HasPrefix(l, "COMMIT"):
			for k, v := range txVer {
				version[k] = v
			}
			for _, w := range tx {
				attempt, worker, ok := r.h.led.callByTxid(r.id, w.txid)
				if !ok {
					return writes, fmt.Errorf("WAL: %s paid with transaction id %q, which no call of this run made", w.key, w.txid)
				}
				cur := version[w.key]
				owned := cur == attempt
				if err := r.h.led.write(r.id, w.key, attempt, worker, &cur, &owned, "the server's WAL (logical decoding)"); err != nil {
					return writes, err
				}
				writes++
			}
		}
	}
	return writes, nil
}
