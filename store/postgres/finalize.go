package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"leaselab/engine"
	"leaselab/store/internal/shared"

	"github.com/jackc/pgx/v5"
)

// finalizePaymentSQL is the finalize's first statement, as the lesson writes it.
const finalizePaymentSQL = `UPDATE Payments SET PaymentStatus = $1, TransactionId = $2 WHERE IdempotencyKey = $3`

// finalizeReadSQL reads the row just before the finalize writes it, locked, so that what it
// says is still true when the UPDATE runs.
const finalizeReadSQL = `SELECT Status, LockedBy, LeaseVersion FROM OutboxMessages WHERE Id = $1 FOR UPDATE`

// finalizeOutbox is the finalize's outbox UPDATE and its arguments, guarded by the ownership
// check and by the fencing token when asked. It returns the row's LeaseVersion (which the
// finalize does not change), so that the ledger knows the version it wrote over.
func finalizeOutbox(req engine.FinalizeRequest, now time.Time) (string, []any) {
	q := `UPDATE OutboxMessages
   SET Status = 'Processed', ProcessedAtUtc = $1, LockedUntilUtc = NULL
 WHERE Id = $2`
	args := []any{now, req.Message.ID}
	if req.OwnershipCheck {
		args = append(args, req.Worker)
		q += fmt.Sprintf(" AND Status = 'Processing' AND LockedBy = $%d", len(args))
	}
	if req.Fencing {
		args = append(args, req.Message.LeaseVersion)
		q += fmt.Sprintf(" AND LeaseVersion = $%d", len(args))
	}
	return q + "\nRETURNING LeaseVersion", args
}

// Finalize writes the provider's outcome to the payment and marks the message Processed, in one
// transaction. With req.OwnershipCheck the outbox UPDATE also requires Status='Processing' AND
// LockedBy=worker (and, with req.Fencing, the worker's lease version); unless it changes exactly
// one row the whole transaction rolls back, the payment update with it.
//
// Under READ COMMITTED the guarded UPDATE waits for a transaction that holds the row (a reclaim
// in flight) and then judges the row as that transaction left it: a finalize that loses that
// race changes nothing and says so (Committed false), as engine.Conn requires.
func (c *Conn) Finalize(ctx context.Context, req engine.FinalizeRequest) (engine.FinalizeResult, error) {
	if c.pipelined(req) {
		if err := ctx.Err(); err != nil {
			return engine.FinalizeResult{}, err
		}
		return c.finalizePipelined(context.WithoutCancel(ctx), req)
	}
	var res engine.FinalizeResult
	err := c.inTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		res, err = c.finalizeTx(ctx, tx, req)
		return err
	})
	return shared.Finalized(res, err)
}

// finalizeTx is the body of Finalize, in tx. Every finalize locks the payment first and the
// outbox row second, so that two finalizes of one message never deadlock. It returns
// shared.ErrRolledBack (with res filled) when the UPDATE changed no row.
func (c *Conn) finalizeTx(ctx context.Context, tx pgx.Tx, req engine.FinalizeRequest) (engine.FinalizeResult, error) {
	var res engine.FinalizeResult
	run := context.WithoutCancel(ctx)
	key := req.Message.IdempotencyKey
	var txID *string
	if req.TransactionID != "" {
		txID = &req.TransactionID
	}
	if _, err := tx.Exec(run, finalizePaymentSQL, req.PaymentStatus, txID, key); err != nil {
		return res, fmt.Errorf("finalize %s: update payment: %w", key, describe(err))
	}
	if err := c.hold.Wait(ctx, key); err != nil {
		return res, fmt.Errorf("finalize %s: held: %w", key, err) // rolled back
	}
	if !req.OwnershipCheck {
		if err := readPrior(run, tx, req.Message, &res); err != nil {
			return res, err
		}
	} else if req.Clock != nil {
		if _, err := tx.Exec(run, lockRowSQL, req.Message.ID); err != nil {
			return res, fmt.Errorf("finalize %s: lock row: %w", key, describe(err))
		}
	}
	// Every lock this finalize waits for is held now (payment, outbox row): read the time.
	now := at(req.Time())
	res.At = now
	var version int64
	update, args := finalizeOutbox(req, now)
	err := tx.QueryRow(run, update, args...).Scan(&version)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if req.OwnershipCheck {
			// The guard failed: not (or no longer) this worker's message. Say why, then roll back.
			if err := readPrior(run, tx, req.Message, &res); err != nil {
				return res, err
			}
		}
		return res, shared.ErrRolledBack
	case err != nil:
		return res, fmt.Errorf("finalize %s: update outbox: %w", key, describe(err))
	}
	res.RowsAffected, res.At = 1, now
	if req.OwnershipCheck {
		res.PriorStatus, res.PriorOwner, res.PriorVersion = engine.StatusProcessing, req.Worker, version
	}
	return res, nil
}

// readPrior reads m's row, as it is now inside tx, into res's Prior fields.
func readPrior(ctx context.Context, tx querier, m engine.Message, res *engine.FinalizeResult) error {
	var owner *string
	err := tx.QueryRow(ctx, finalizeReadSQL, m.ID).Scan(&res.PriorStatus, &owner, &res.PriorVersion)
	if err != nil {
		return fmt.Errorf("finalize %s: read row: %w", m.IdempotencyKey, describe(err))
	}
	res.PriorOwner = str(owner)
	return nil
}
