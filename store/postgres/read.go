package postgres

import (
	"context"
	"fmt"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"

	"github.com/jackc/pgx/v5"
)

// at is how every time goes to the database, as a parameter (never now()): UTC, cut to the
// millisecond, exactly as the SQLite store keeps it, so that both compare leases alike.
func at(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// fromDB reads a nullable timestamptz; NULL gives the zero time.
func fromDB(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// str reads a nullable text; NULL gives "".
func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// CreatePayment writes a Pending payment and its Pending outbox message in one transaction:
// the transactional outbox. Either both rows exist afterwards or neither does.
func (db *DB) CreatePayment(ctx context.Context, p engine.NewPayment) error {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	return pgx.BeginFunc(ctx, db.admin, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO Payments (IdempotencyKey, Amount, PaymentStatus, CreatedAtUtc)
VALUES ($1, $2, 'Pending', $3)`, p.Key, p.Amount, at(p.CreatedAt)); err != nil {
			return fmt.Errorf("create payment %s: %w", p.Key, describe(err))
		}
		if _, err := tx.Exec(ctx, `INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, Status, CreatedAtUtc)
VALUES ($1, $2, $3, 'Pending', $4)`, p.Key, engine.MessageType, p.Payload, at(p.CreatedAt)); err != nil {
			return fmt.Errorf("create outbox message %s: %w", p.Key, describe(err))
		}
		return nil
	})
}

// snapshotSQL reads every row with its payment and, where an open transaction holds the row's
// lock, whose connection that is: the row's xmax is the locking (or updating) transaction's id,
// which pg_stat_activity shows only while that transaction runs. The lock is in no column.
const snapshotSQL = `SELECT o.Id, o.IdempotencyKey, o.Status, o.CreatedAtUtc, o.ProcessedAtUtc, o.LockedBy,
       o.LockedUntilUtc, o.Attempts, o.LeaseVersion, p.PaymentStatus, p.TransactionId, p.Amount,
       a.application_name, o.NextAttemptUtc
  FROM OutboxMessages o LEFT JOIN Payments p ON p.IdempotencyKey = o.IdempotencyKey
  LEFT JOIN (SELECT backend_xid, application_name FROM pg_stat_activity WHERE backend_xid IS NOT NULL) a
         ON a.backend_xid = o.xmax
 ORDER BY o.Id`

// Snapshot reads every outbox row with its payment, in one statement (one snapshot).
func (db *DB) Snapshot(ctx context.Context) ([]engine.Row, error) {
	return shared.Collect(func(fn func(engine.Row) error) error { return db.EachRow(ctx, fn) })
}

// EachRow calls fn with each row Snapshot reads, one at a time, in one statement.
func (db *DB) EachRow(ctx context.Context, fn func(engine.Row) error) error {
	return shared.Read(ctx, db.reader(), "snapshot", snapshotSQL, scanRow, fn)
}

// reader runs read statements on the admin pool.
func (db *DB) reader() shared.Reader {
	query := func(ctx context.Context, q string) (shared.Rows, error) { return db.admin.Query(ctx, q) }
	return shared.Reader{Timeout: callTimeout, Describe: describe, Query: query}
}

// scanRow reads one row of snapshotSQL.
func scanRow(rows shared.Rows) (engine.Row, error) {
	var (
		r                      engine.Row
		created                time.Time
		processed, until, next *time.Time
		owner, payStatus, txID *string
		amount                 *int64
		lockedBy               *string
	)
	if err := rows.Scan(&r.ID, &r.IdempotencyKey, &r.Status, &created, &processed, &owner, &until,
		&r.Attempts, &r.LeaseVersion, &payStatus, &txID, &amount, &lockedBy, &next); err != nil {
		return r, err
	}
	r.NextAttempt = fromDB(next)
	r.CreatedAt, r.ProcessedAt, r.LockedUntil = created.UTC(), fromDB(processed), fromDB(until)
	r.LockedBy, r.PaymentStatus, r.TransactionID, r.RowLock = str(owner), str(payStatus), str(txID), str(lockedBy)
	if amount != nil {
		r.Amount = *amount
	}
	return r, nil
}

// EachTransactionID calls fn with every payment's key and TransactionId ("" when NULL), in Id
// order, one at a time, in one statement.
func (db *DB) EachTransactionID(ctx context.Context, fn func(key, id string) error) error {
	return shared.EachTransactionID(ctx, db.reader(), `SELECT IdempotencyKey, TransactionId FROM Payments ORDER BY Id`, fn)
}

// Counts reads the figures the safety checks need, in one read-only REPEATABLE READ
// transaction, so that all of them describe the same moment.
func (db *DB) Counts(ctx context.Context) (engine.Counts, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	var c engine.Counts
	err := pgx.BeginTxFunc(ctx, db.admin, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT count(*),
  count(*) FILTER (WHERE Status = 'Pending'),
  count(*) FILTER (WHERE Status = 'Processing'),
  count(*) FILTER (WHERE Status = 'Processed'),
  count(*) FILTER (WHERE Status = 'DeadLettered')
FROM OutboxMessages`).Scan(&c.Messages, &c.OutboxPending, &c.OutboxProcessing, &c.OutboxProcessed, &c.OutboxDeadLettered)
		if err != nil {
			return fmt.Errorf("counts: outbox: %w", describe(err))
		}
		err = tx.QueryRow(ctx, `SELECT
  count(*) FILTER (WHERE PaymentStatus = 'Pending'),
  count(*) FILTER (WHERE PaymentStatus = 'Paid'),
  count(*) FILTER (WHERE PaymentStatus = 'Failed'),
  count(*) FILTER (WHERE PaymentStatus = 'Paid' AND TransactionId IS NOT NULL),
  count(*) FILTER (WHERE PaymentStatus = 'Failed' AND TransactionId IS NOT NULL)
FROM Payments`).Scan(&c.PaymentsPending, &c.PaymentsPaid, &c.PaymentsFailed, &c.PaidWithTxID, &c.FailedWithTxID)
		if err != nil {
			return fmt.Errorf("counts: payments: %w", describe(err))
		}
		err = tx.QueryRow(ctx, `SELECT
  coalesce((SELECT max(n) FROM (SELECT count(*) AS n FROM Payments GROUP BY IdempotencyKey) p), 0),
  coalesce((SELECT max(n) FROM (SELECT count(*) AS n FROM OutboxMessages GROUP BY IdempotencyKey) o), 0),
  (SELECT count(*) - count(DISTINCT IdempotencyKey) FROM Payments) +
  (SELECT count(*) - count(DISTINCT IdempotencyKey) FROM OutboxMessages)`).
			Scan(&c.MaxPaymentsPerKey, &c.MaxOutboxPerKey, &c.DuplicateRows)
		if err != nil {
			return fmt.Errorf("counts: duplicates: %w", describe(err))
		}
		return nil
	})
	return c, err
}

// seedChunk is how many payments SeedBulk writes per transaction.
const seedChunk = 10_000

// SeedBulk writes n Pending payments PAY-001… and their Pending outbox messages, exactly as
// engine.Seed writes them through CreatePayment (same keys, amounts, payloads, creation times
// and ids), with COPY, seedChunk payments per transaction.
func (db *DB) SeedBulk(ctx context.Context, n int, start time.Time) error {
	err := shared.SeedChunks(n, seedChunk, func(from, to int) error {
		var pays, msgs [][]any
		for i := from; i <= to; i++ {
			p := engine.SeedPayment(i, n, start)
			pays = append(pays, []any{p.Key, p.Amount, engine.PaymentPending, at(p.CreatedAt)})
			msgs = append(msgs, []any{p.Key, engine.MessageType, p.Payload, engine.StatusPending, at(p.CreatedAt)})
		}
		err := pgx.BeginFunc(ctx, db.admin, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"payments"},
				[]string{"idempotencykey", "amount", "paymentstatus", "createdatutc"}, pgx.CopyFromRows(pays)); err != nil {
				return err
			}
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"outboxmessages"},
				[]string{"idempotencykey", "type", "payload", "status", "createdatutc"}, pgx.CopyFromRows(msgs))
			return err
		})
		if err != nil {
			return fmt.Errorf("seed %s…%s: %w", engine.MessageKey(from), engine.MessageKey(to), describe(err))
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Fresh statistics: without them the planner guesses a handful of rows and sorts every
	// unfinished row on each claim (a bitmap scan) instead of walking the claim index to the
	// first claimable one, which made a claim cost 1 ms at 2,000 rows.
	if _, err := db.admin.Exec(ctx, `ANALYZE Payments, OutboxMessages`); err != nil {
		return fmt.Errorf("seed: analyze: %w", describe(err))
	}
	return nil
}
