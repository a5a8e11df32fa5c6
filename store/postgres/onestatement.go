package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"leaselab/engine"

	"github.com/jackc/pgx/v5"
)

// A guarded finalize as one statement. Its data-modifying CTEs do, in this order, what
// finalizeTx does in four statements:
//
//	p  locks the payment row (FOR NO KEY UPDATE, the lock an UPDATE of it takes);
//	o  is the guarded outbox UPDATE (ownership, and the version with fencing), which may wait
//	   for a transaction that holds the row and then judges the row as that one left it;
//	u  writes the payment only when o changed the row;
//	w  reads the row, locked, only when o changed nothing: why the guard failed (readPrior).
//
// The order is forced by the references, not left to the executor: o's condition reads p whole
// (an uncorrelated subquery is computed before o's scan hands the UPDATE its first row), u reads
// o, and w reads o whole before it locks a row. So the payment is locked before the outbox row,
// as on every other finalize path, and two finalizes of one message never deadlock. One
// statement is one transaction: when the guard fails nothing is written (u changes nothing, p
// and w only lock), and the answer says why, read inside that transaction.

// finalizeOneSQL is the single finalize; $1 now, $2 the message's Id, $3 its key, $4 the worker,
// $5 the payment status, $6 the transaction id (NULL when none) and, with fencing, $7 the
// lease version. It returns one row: passed, and the row's status, owner and version (when
// passed, the version the UPDATE returned).
func finalizeOneSQL(fencing bool) string {
	guard := ""
	if fencing {
		guard = " AND LeaseVersion = $7"
	}
	return `WITH p AS MATERIALIZED (
  SELECT 1 FROM Payments WHERE IdempotencyKey = $3 FOR NO KEY UPDATE),
o AS (
  UPDATE OutboxMessages SET Status = 'Processed', ProcessedAtUtc = $1, LockedUntilUtc = NULL
   WHERE Id = $2 AND Status = 'Processing' AND LockedBy = $4` + guard + `
     AND (SELECT count(*) FROM p) >= 0
  RETURNING LeaseVersion),
u AS (
  UPDATE Payments SET PaymentStatus = $5, TransactionId = $6
   WHERE IdempotencyKey = $3 AND EXISTS (SELECT FROM o)),
w AS (
  SELECT Status, LockedBy, LeaseVersion FROM OutboxMessages
   WHERE Id = $2 AND NOT EXISTS (SELECT FROM o) FOR UPDATE)
SELECT true, ''::text, NULL::text, LeaseVersion FROM o
UNION ALL
SELECT false, Status, LockedBy, LeaseVersion FROM w`
}

var (
	finalizeOneFenced   = finalizeOneSQL(true)
	finalizeOneUnfenced = finalizeOneSQL(false)
)

// finalizeOneArgs is req's one-statement finalize and its arguments.
func finalizeOneArgs(req engine.FinalizeRequest) (string, []any) {
	var txID *string
	if req.TransactionID != "" {
		txID = &req.TransactionID
	}
	m := req.Message
	if req.Fencing {
		return finalizeOneFenced, []any{at(req.Time()), m.ID, m.IdempotencyKey, req.Worker, req.PaymentStatus, txID, m.LeaseVersion}
	}
	return finalizeOneUnfenced, []any{at(req.Time()), m.ID, m.IdempotencyKey, req.Worker, req.PaymentStatus, txID}
}

// queueFinalizeOne adds req's one-statement finalize to b.
func queueFinalizeOne(b *pgx.Batch, req engine.FinalizeRequest) {
	q, args := finalizeOneArgs(req)
	b.Queue(q, args...)
}

// scanFinalizeOne reads the answer of a finalizeOneSQL: ok when the guard held. A message with
// no row is an error, as readPrior's.
func scanFinalizeOne(row pgx.Row, req engine.FinalizeRequest) (res engine.FinalizeResult, ok bool, err error) {
	var (
		status string
		owner  *string
	)
	res.At = at(req.Time()) // fixed: Clock is nil on this path
	err = row.Scan(&ok, &status, &owner, &res.PriorVersion)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return res, false, fmt.Errorf("finalize %s: read row: %w", req.Message.IdempotencyKey, describe(err))
	case err != nil:
		return res, false, fmt.Errorf("finalize %s: %w", req.Message.IdempotencyKey, describe(err))
	case ok:
		res.RowsAffected, res.PriorStatus, res.PriorOwner = 1, engine.StatusProcessing, req.Worker
	default:
		res.PriorStatus, res.PriorOwner = status, str(owner)
	}
	return res, ok, nil
}

// finalizeOne is Finalize for a guarded request: one statement, one round trip.
func (c *Conn) finalizeOne(ctx context.Context, req engine.FinalizeRequest) (engine.FinalizeResult, error) {
	q, args := finalizeOneArgs(req)
	res, ok, err := scanFinalizeOne(c.conn.QueryRow(ctx, q, args...), req)
	if err != nil {
		return engine.FinalizeResult{}, err
	}
	res.Committed = ok
	c.traceOutcome(res.RowsAffected, ok)
	return res, nil
}

// finalizeManySQL is the batch's finalize as one statement: the same CTEs as finalizeOneSQL
// over every request at once, the requests given as arrays ($1 ids, $2 keys, $3 workers, $4
// versions, $5 fencing, $6 times, $7 payment statuses, $8 transaction ids). p locks every
// payment of the batch, in key order (bytewise, COLLATE "C", as keyOrder sorts the savepoint
// paths, whatever the database's collation), before o changes any outbox row: two batches wait
// for each other's payments in one order and never deadlock. Each message's payment changes
// only when o changed its row, and o changes none unless every message of the batch exists: a
// batch that names a missing message writes nothing (and finalizeMany reports the error). It
// returns a row per request whose message exists: its Id, passed, and the row's status, owner
// and version.
const finalizeManySQL = `WITH p AS MATERIALIZED (
  SELECT IdempotencyKey FROM Payments
   WHERE IdempotencyKey = ANY ($2::text[])
   ORDER BY IdempotencyKey COLLATE "C" FOR NO KEY UPDATE),
o AS (
  UPDATE OutboxMessages m SET Status = 'Processed', ProcessedAtUtc = r.at, LockedUntilUtc = NULL
    FROM unnest($1::bigint[], $3::text[], $4::bigint[], $5::bool[], $6::timestamptz[])
         AS r(id, worker, version, fenced, at)
   WHERE m.Id = ANY ($1::bigint[]) AND m.Id = r.id
     AND m.Status = 'Processing' AND m.LockedBy = r.worker
     AND (NOT r.fenced OR m.LeaseVersion = r.version)
     AND (SELECT count(*) FROM p) >= 0
     AND (SELECT count(*) FROM OutboxMessages WHERE Id = ANY ($1::bigint[])) = cardinality($1::bigint[])
  RETURNING m.Id, m.LeaseVersion),
u AS (
  UPDATE Payments pay SET PaymentStatus = r.status, TransactionId = r.txid
    FROM unnest($1::bigint[], $2::text[], $7::text[], $8::text[]) AS r(id, key, status, txid)
   WHERE pay.IdempotencyKey = ANY ($2::text[]) AND pay.IdempotencyKey = r.key
     AND r.id IN (SELECT Id FROM o)),
w AS (
  SELECT Id, Status, LockedBy, LeaseVersion FROM OutboxMessages
   WHERE Id = ANY ($1::bigint[]) AND Id NOT IN (SELECT Id FROM o)
   ORDER BY Id FOR UPDATE)
SELECT Id, true, ''::text, NULL::text, LeaseVersion FROM o
UNION ALL
SELECT Id, false, Status, LockedBy, LeaseVersion FROM w`

// keyOrder is the order in which a batch finalizes reqs: by key, bytewise (COLLATE "C"), as
// finalizeManySQL locks their payments, stable for a key named twice. Every finalize
// transaction of this package so takes its payment locks in one order, and two batches over
// the same messages wait for each other instead of deadlocking.
func keyOrder(reqs []engine.FinalizeRequest) []int {
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return reqs[order[a]].Message.IdempotencyKey < reqs[order[b]].Message.IdempotencyKey
	})
	return order
}

// oneStatementBatch reports whether reqs can go in one finalizeManySQL: no message twice (the
// savepoint path finalizes a repeated message twice, in turn; one UPDATE cannot).
func oneStatementBatch(reqs []engine.FinalizeRequest) bool {
	ids := make(map[int64]bool, len(reqs))
	keys := make(map[string]bool, len(reqs))
	for _, r := range reqs {
		if ids[r.Message.ID] || keys[r.Message.IdempotencyKey] {
			return false
		}
		ids[r.Message.ID], keys[r.Message.IdempotencyKey] = true, true
	}
	return true
}

// finalizeMany is FinalizeBatch for guarded requests: finalizeManySQL, one statement (one
// transaction) and one round trip for the whole batch. A message with no row is an error, and
// then the statement has written nothing.
func (c *Conn) finalizeMany(ctx context.Context, reqs []engine.FinalizeRequest) ([]engine.FinalizeResult, error) {
	return c.finalizeManyWith(ctx, finalizeManySQL, reqs)
}

// finalizeManyWith runs query, finalizeManySQL (or, in the fence's benchmark, a copy of it with
// another guard), with reqs as its arguments, and reads its rows into the requests' results.
func (c *Conn) finalizeManyWith(ctx context.Context, query string, reqs []engine.FinalizeRequest) ([]engine.FinalizeResult, error) {
	n := len(reqs)
	var (
		ids, versions           = make([]int64, n), make([]int64, n)
		keys, workers, statuses = make([]string, n), make([]string, n), make([]string, n)
		txIDs                   = make([]*string, n)
		fenced                  = make([]bool, n)
		times                   = make([]time.Time, n)
		index                   = make(map[int64]int, n)
	)
	for i, r := range reqs {
		ids[i], keys[i], workers[i], versions[i] = r.Message.ID, r.Message.IdempotencyKey, r.Worker, r.Message.LeaseVersion
		fenced[i], times[i], statuses[i] = r.Fencing, at(r.Time()), r.PaymentStatus
		if r.TransactionID != "" {
			txIDs[i] = &reqs[i].TransactionID
		}
		index[r.Message.ID] = i
	}
	out := make([]engine.FinalizeResult, n)
	seen := make([]bool, n)
	rows, err := c.conn.Query(ctx, query, ids, keys, workers, versions, fenced, times, statuses, txIDs)
	if err != nil {
		return nil, fmt.Errorf("finalize batch: %w", describe(err))
	}
	if err := readMany(rows, reqs, index, out, seen); err != nil {
		return nil, fmt.Errorf("finalize batch: %w", err)
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("finalize batch: finalize %s: read row: %w", reqs[i].Message.IdempotencyKey, pgx.ErrNoRows)
		}
	}
	return out, nil
}

// readMany reads finalizeManySQL's rows into out (by index of the message's Id).
func readMany(rows pgx.Rows, reqs []engine.FinalizeRequest, index map[int64]int, out []engine.FinalizeResult, seen []bool) error {
	defer rows.Close()
	for rows.Next() {
		var (
			id     int64
			ok     bool
			status string
			owner  *string
			ver    int64
		)
		if err := rows.Scan(&id, &ok, &status, &owner, &ver); err != nil {
			return err
		}
		i, known := index[id]
		if !known {
			return fmt.Errorf("finalize batch: the server answered for message %d, not in the batch", id)
		}
		req := reqs[i]
		res := engine.FinalizeResult{Committed: ok, At: at(req.Time()), PriorVersion: ver}
		if ok {
			res.RowsAffected, res.PriorStatus, res.PriorOwner = 1, engine.StatusProcessing, req.Worker
		} else {
			res.PriorStatus, res.PriorOwner = status, str(owner)
		}
		out[i], seen[i] = res, true
	}
	return describe(rows.Err())
}
