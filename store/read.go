package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"
)

// TimeLayout is how every time is stored: UTC, fixed width, milliseconds, so that string
// comparison in SQL is time comparison.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t as stored.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads a stored time; "" gives the zero time.
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(TimeLayout, s)
}

// CreatePayment writes a Pending payment and its Pending outbox message in one transaction:
// the transactional outbox. Either both rows exist afterwards or neither does.
func (db *DB) CreatePayment(ctx context.Context, p engine.NewPayment) error {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	at := FormatTime(p.CreatedAt)
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO Payments (IdempotencyKey, Amount, PaymentStatus, CreatedAtUtc)
VALUES (:key, :amount, 'Pending', :at)`, sql.Named("key", p.Key), sql.Named("amount", p.Amount), sql.Named("at", at)); err != nil {
			return fmt.Errorf("create payment %s: %w", p.Key, describe(err))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, Status, CreatedAtUtc)
VALUES (:key, :type, :payload, 'Pending', :at)`, sql.Named("key", p.Key), sql.Named("type", engine.MessageType),
			sql.Named("payload", p.Payload), sql.Named("at", at)); err != nil {
			return fmt.Errorf("create outbox message %s: %w", p.Key, describe(err))
		}
		return nil
	})
}

const snapshotSQL = `SELECT o.Id, o.IdempotencyKey, o.Status, o.CreatedAtUtc, o.ProcessedAtUtc, o.LockedBy,
       o.LockedUntilUtc, o.Attempts, o.LeaseVersion, p.PaymentStatus, p.TransactionId, p.Amount,
       o.NextAttemptUtc
  FROM OutboxMessages o LEFT JOIN Payments p ON p.IdempotencyKey = o.IdempotencyKey
 ORDER BY o.Id`

// Snapshot reads every outbox row with its payment, in one read transaction.
func (db *DB) Snapshot(ctx context.Context) ([]engine.Row, error) {
	return shared.Collect(func(fn func(engine.Row) error) error { return db.EachRow(ctx, fn) })
}

// EachRow calls fn with each row Snapshot reads, one at a time, in one read statement.
func (db *DB) EachRow(ctx context.Context, fn func(engine.Row) error) error {
	return shared.Read(ctx, db.reader(), "snapshot", snapshotSQL, scanRow, fn)
}

// scanRow reads one row of snapshotSQL.
func scanRow(rows shared.Rows) (engine.Row, error) {
	var (
		r                                  engine.Row
		created                            string
		processed, owner, until, payStatus sql.NullString
		txID, next                         sql.NullString
		amount                             sql.NullInt64
	)
	if err := rows.Scan(&r.ID, &r.IdempotencyKey, &r.Status, &created, &processed, &owner, &until,
		&r.Attempts, &r.LeaseVersion, &payStatus, &txID, &amount, &next); err != nil {
		return r, err
	}
	r.NextAttempt, _ = ParseTime(next.String)
	r.CreatedAt, _ = ParseTime(created)
	r.ProcessedAt, _ = ParseTime(processed.String)
	r.LockedUntil, _ = ParseTime(until.String)
	r.LockedBy, r.PaymentStatus, r.TransactionID, r.Amount = owner.String, payStatus.String, txID.String, amount.Int64
	return r, nil
}

// EachTransactionID calls fn with every payment's key and TransactionId ("" when NULL), in Id
// order, one at a time.
func (db *DB) EachTransactionID(ctx context.Context, fn func(key, id string) error) error {
	return shared.EachTransactionID(ctx, db.reader(), transactionIDsSQL, fn)
}

// Counts reads the figures the safety checks need, in one read transaction.
func (db *DB) Counts(ctx context.Context) (engine.Counts, error) {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	var c engine.Counts
	tx, err := db.admin.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return c, fmt.Errorf("counts: %w", describe(err))
	}
	defer tx.Rollback()
	err = db.inReadTx(ctx, tx, countsOutboxSQL).Scan(&c.Messages, &c.OutboxPending, &c.OutboxProcessing, &c.OutboxProcessed, &c.OutboxDeadLettered)
	if err != nil {
		return c, fmt.Errorf("counts: outbox: %w", describe(err))
	}
	err = db.inReadTx(ctx, tx, countsPaymentsSQL).Scan(&c.PaymentsPending, &c.PaymentsPaid, &c.PaymentsFailed, &c.PaidWithTxID, &c.FailedWithTxID)
	if err != nil {
		return c, fmt.Errorf("counts: payments: %w", describe(err))
	}
	err = db.inReadTx(ctx, tx, countsDuplicatesSQL).
		Scan(&c.MaxPaymentsPerKey, &c.MaxOutboxPerKey, &c.DuplicateRows)
	if err != nil {
		return c, fmt.Errorf("counts: duplicates: %w", describe(err))
	}
	return c, nil
}

// The statements of Counts and EachTransactionID, prepared once on the admin pool (prepared).
const (
	countsOutboxSQL = `SELECT
  count(*),
  coalesce(sum(Status = 'Pending'), 0),
  coalesce(sum(Status = 'Processing'), 0),
  coalesce(sum(Status = 'Processed'), 0),
  coalesce(sum(Status = 'DeadLettered'), 0)
FROM OutboxMessages`
	countsPaymentsSQL = `SELECT
  coalesce(sum(PaymentStatus = 'Pending'), 0),
  coalesce(sum(PaymentStatus = 'Paid'), 0),
  coalesce(sum(PaymentStatus = 'Failed'), 0),
  coalesce(sum(PaymentStatus = 'Paid' AND TransactionId IS NOT NULL), 0),
  coalesce(sum(PaymentStatus = 'Failed' AND TransactionId IS NOT NULL), 0)
FROM Payments`
	countsDuplicatesSQL = `SELECT
  coalesce((SELECT max(n) FROM (SELECT count(*) AS n FROM Payments GROUP BY IdempotencyKey)), 0),
  coalesce((SELECT max(n) FROM (SELECT count(*) AS n FROM OutboxMessages GROUP BY IdempotencyKey)), 0),
  (SELECT count(*) - count(DISTINCT IdempotencyKey) FROM Payments) +
  (SELECT count(*) - count(DISTINCT IdempotencyKey) FROM OutboxMessages)`
	transactionIDsSQL = `SELECT IdempotencyKey, TransactionId FROM Payments ORDER BY Id`
)

// inReadTx runs the prepared statement q, one row, in tx.
func (db *DB) inReadTx(ctx context.Context, tx *sql.Tx, q string) *sql.Row {
	st, err := db.prepared(ctx, q)
	if err != nil {
		return tx.QueryRowContext(ctx, q) // the error again, from the statement itself
	}
	return tx.StmtContext(ctx, st).QueryRowContext(ctx)
}

// reader runs read statements (prepared) on the admin pool.
func (db *DB) reader() shared.Reader {
	query := func(ctx context.Context, q string) (shared.Rows, error) { return db.query(ctx, q) }
	return shared.Reader{Timeout: callTimeout, Describe: describe, Query: query}
}

// query runs the prepared statement q on the admin pool.
func (db *DB) query(ctx context.Context, q string) (*sql.Rows, error) {
	st, err := db.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx)
}
