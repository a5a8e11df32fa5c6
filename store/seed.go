package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"leaselab/engine"
)

// seedChunk is how many payments SeedBulk writes per transaction: large enough that the commit
// cost vanishes, small enough that readers never wait long for a checkpoint.
const seedChunk = 10_000

// SeedBulk writes n Pending payments PAY-001… and their Pending outbox messages, exactly as
// engine.Seed writes them through CreatePayment (same keys, amounts, payloads and creation
// times, 1 ms apart before start), but many rows per transaction. It is for large backlogs
// (benchmarks, `leaselab seed`); each transaction is still all-or-nothing for its rows.
// The keys must not exist yet: a second seed of the same keys fails on the UNIQUE key.
func (db *DB) SeedBulk(ctx context.Context, n int, start time.Time) error {
	if n < 0 {
		return fmt.Errorf("seed: negative count %d", n)
	}
	for from := 1; from <= n; from += seedChunk {
		to := min(from+seedChunk-1, n)
		if err := db.seedRange(ctx, from, to, n, start); err != nil {
			return err
		}
	}
	return nil
}

// seedRange writes payments from..to (1-based, inclusive) of n in one transaction.
func (db *DB) seedRange(ctx context.Context, from, to, n int, start time.Time) error {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	return db.inTx(ctx, func(tx *sql.Tx) error {
		pay, err := tx.PrepareContext(ctx, `INSERT INTO Payments (IdempotencyKey, Amount, PaymentStatus, CreatedAtUtc)
VALUES (?, ?, 'Pending', ?)`)
		if err != nil {
			return fmt.Errorf("seed: prepare payment insert: %w", describe(err))
		}
		defer pay.Close()
		msg, err := tx.PrepareContext(ctx, `INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, Status, CreatedAtUtc)
VALUES (?, ?, ?, 'Pending', ?)`)
		if err != nil {
			return fmt.Errorf("seed: prepare outbox insert: %w", describe(err))
		}
		defer msg.Close()
		for i := from; i <= to; i++ {
			p := seedPayment(i, n, start)
			at := FormatTime(p.CreatedAt)
			if _, err := pay.ExecContext(ctx, p.Key, p.Amount, at); err != nil {
				return fmt.Errorf("seed payment %s: %w", p.Key, describe(err))
			}
			if _, err := msg.ExecContext(ctx, p.Key, engine.MessageType, p.Payload, at); err != nil {
				return fmt.Errorf("seed outbox message %s: %w", p.Key, describe(err))
			}
		}
		return nil
	})
}

// seedPayment is the i-th (1-based) of n payments as engine.Seed makes it; TestSeedBulkMatchesSeed
// keeps the two in step.
func seedPayment(i, n int, start time.Time) engine.NewPayment {
	key := engine.MessageKey(i)
	amount := int64(1000 + 250*((i-1)%8))
	return engine.NewPayment{
		Key:       key,
		Amount:    amount,
		CreatedAt: start.Add(time.Duration(i-n-1) * time.Millisecond),
		Payload:   fmt.Sprintf(`{"idempotencyKey":%q,"amount":%d}`, key, amount),
	}
}
