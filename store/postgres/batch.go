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

// ClaimBatchSQL claims up to k of the oldest claimable rows in one statement, as ClaimSQL claims
// one: the MATERIALIZED CTE picks and locks them (SKIP LOCKED), the UPDATE takes each under the
// lesson's conditions. $1 is now, $2 the worker, $3 the lease end.
//
// The UPDATE finds its rows by their Ids (= ANY of the CTE's array, an index scan of the primary
// key); joined to the CTE instead, the planner hashed the CTE and read the whole table, 1 ms a
// batch at 2,000 rows. k is written into the text (a checked integer, not a time) so that the
// statement's cached plan serves every call: with LIMIT as a parameter PostgreSQL planned it
// anew each time.
func ClaimBatchSQL(k int) string {
	return fmt.Sprintf(`WITH c AS MATERIALIZED (
  SELECT Id FROM OutboxMessages
   WHERE `+claimable+`
   ORDER BY CreatedAtUtc, Id
   LIMIT %d
     FOR UPDATE SKIP LOCKED)
UPDATE OutboxMessages o
   SET Status = 'Processing', LockedBy = $2, LockedUntilUtc = $3,
       Attempts = o.Attempts + 1, LeaseVersion = o.LeaseVersion + 1
 WHERE o.Id = ANY (ARRAY(SELECT Id FROM c)) AND o.ProcessedAtUtc IS NULL
   AND (o.Status = 'Pending' OR (o.Status = 'Processing' AND o.LockedUntilUtc < $1))
RETURNING o.Id, o.IdempotencyKey, o.Type, o.Payload, o.LeaseVersion, o.CreatedAtUtc`, k)
}

// ClaimBatch claims up to k of the oldest claimable messages for req.Worker in one statement,
// with the same lease as Claim. The messages come back in claim order (oldest first); none when
// nothing is claimable (or every candidate is held by another transaction). req.Key must be
// empty.
func (c *Conn) ClaimBatch(ctx context.Context, req engine.ClaimRequest, k int) ([]engine.Message, error) {
	if k < 1 {
		return nil, fmt.Errorf("claim batch: k = %d, want at least 1", k)
	}
	if req.Key != "" {
		return nil, fmt.Errorf("claim batch: a batch cannot claim a named message (%s)", req.Key)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now, until := reqTimes(req)
	rows, err := c.conn.Query(context.WithoutCancel(ctx), ClaimBatchSQL(k), now, req.Worker, until)
	if err != nil {
		return nil, fmt.Errorf("claim batch: %w", describe(err))
	}
	defer rows.Close()
	got, err := shared.All(rows, "claim batch", describe, shared.ScanClaimed[time.Time](until))
	if err != nil {
		return nil, err
	}
	return shared.InClaimOrder(got, time.Time.Compare), nil
}

// FinalizeAndClaim is the fused step: it finalizes fin exactly as Finalize does and claims the
// next message exactly as Claim does, in one transaction. When fin's guarded UPDATE changes no
// row the whole transaction rolls back, the payment update with it, and the claim is made on
// its own; both results are returned (FinalizeResult.Committed false). Any error rolls back
// both halves.
func (c *Conn) FinalizeAndClaim(ctx context.Context, fin engine.FinalizeRequest, next engine.ClaimRequest) (engine.FinalizeResult, engine.ClaimResult, error) {
	if c.pipelined(fin) && next.Key == "" {
		if err := ctx.Err(); err != nil {
			return engine.FinalizeResult{}, engine.ClaimResult{}, err
		}
		return c.fusedPipelined(context.WithoutCancel(ctx), fin, next)
	}
	var (
		fres engine.FinalizeResult
		cres engine.ClaimResult
	)
	err := c.inTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if fres, err = c.finalizeTx(ctx, tx, fin); err != nil {
			return err
		}
		if next.Key != "" {
			cres, err = c.claimKeyed(context.WithoutCancel(ctx), tx, next)
		} else {
			cres, err = claimOne(context.WithoutCancel(ctx), tx, next)
		}
		return err
	})
	return shared.Fused(fres, cres, err, func() (engine.ClaimResult, error) { return c.Claim(ctx, next) })
}

// FinalizeBatch finalizes each of reqs exactly as Finalize does, all in one transaction: one
// whose guarded UPDATE changes no row changes nothing (its payment neither) and comes back with
// Committed false and why, while the others commit. results[i] is the outcome of reqs[i]. An
// error rolls back the whole batch. Guarded requests go as one statement (finalizeManySQL),
// which locks the batch's payments in key order before any outbox row; the others each in a
// savepoint of their own, rolled back to when the guard fails.
func (c *Conn) FinalizeBatch(ctx context.Context, reqs []engine.FinalizeRequest) ([]engine.FinalizeResult, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	if c.pipelined(reqs...) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return c.finalizeBatchPipelined(context.WithoutCancel(ctx), reqs)
	}
	out := make([]engine.FinalizeResult, len(reqs))
	err := c.inTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		run := context.WithoutCancel(ctx)
		for _, i := range keyOrder(reqs) {
			req := reqs[i]
			sp, err := tx.Begin(run) // a savepoint
			if err != nil {
				return fmt.Errorf("finalize batch: savepoint: %w", describe(err))
			}
			res, err := c.finalizeTx(ctx, sp, req)
			switch {
			case errors.Is(err, shared.ErrRolledBack):
				if err := sp.Rollback(run); err != nil {
					return fmt.Errorf("finalize batch: roll back %s: %w", req.Message.IdempotencyKey, describe(err))
				}
			case err != nil:
				return err
			default:
				if err := sp.Commit(run); err != nil {
					return fmt.Errorf("finalize batch: release: %w", describe(err))
				}
				res.Committed = true
			}
			out[i] = res
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
