package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"
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
	return shared.SeedChunks(n, seedChunk, func(from, to int) error {
		return db.seedRange(ctx, from, to, n, start)
	})
}

// PartialSeedError is a SeedBulk that stopped part way (an interrupt, a full disk): the first
// Written payments of Of, whole transactions, are in the database; the rest are not. It is
// engine.PartialSeedError, which the command line knows without this package.
type PartialSeedError = engine.PartialSeedError

// seedRows is how many rows one INSERT statement of SeedBulk writes: a statement per row would
// spend most of the seed in database/sql and the driver.
const seedRows = 100

// seedRange writes payments from..to (1-based, inclusive) of n in one transaction, seedRows per
// statement.
func (db *DB) seedRange(ctx context.Context, from, to, n int, start time.Time) error {
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var full [2]*sql.Stmt // the statements for a group of seedRows rows, prepared once
		for lo := from; lo <= to; lo += seedRows {
			hi := min(lo+seedRows-1, to)
			pay, msg := seedInsertSQL(hi - lo + 1)
			var payArgs, msgArgs []any
			for i := lo; i <= hi; i++ {
				p := engine.SeedPayment(i, n, start)
				at := FormatTime(p.CreatedAt)
				payArgs = append(payArgs, p.Key, p.Amount, at)
				msgArgs = append(msgArgs, p.Key, engine.MessageType, p.Payload, at)
			}
			for j, st := range []struct {
				query string
				args  []any
			}{{pay, payArgs}, {msg, msgArgs}} {
				var err error
				if hi-lo+1 == seedRows {
					if full[j] == nil {
						if full[j], err = tx.PrepareContext(ctx, st.query); err != nil {
							return fmt.Errorf("seed: prepare: %w", describe(err))
						}
						defer full[j].Close()
					}
					_, err = full[j].ExecContext(ctx, st.args...)
				} else {
					_, err = tx.ExecContext(ctx, st.query, st.args...)
				}
				if err != nil {
					return fmt.Errorf("seed %s…%s: %w", engine.MessageKey(lo), engine.MessageKey(hi), describe(err))
				}
			}
		}
		return nil
	})
}

// seedInsertSQL returns the two INSERTs of rows payments and outbox messages, with the same
// columns and values as CreatePayment's.
func seedInsertSQL(rows int) (payments, outbox string) {
	pay := strings.Repeat(", (?, ?, 'Pending', ?)", rows)[2:]
	msg := strings.Repeat(", (?, ?, ?, 'Pending', ?)", rows)[2:]
	return `INSERT INTO Payments (IdempotencyKey, Amount, PaymentStatus, CreatedAtUtc) VALUES ` + pay,
		`INSERT INTO OutboxMessages (IdempotencyKey, Type, Payload, Status, CreatedAtUtc) VALUES ` + msg
}
