package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"leaselab/engine"
	"leaselab/store/internal/shared"
)

// ClaimBatchSQL takes the rows the claim's read found (candidates, with k): their ids come as one
// JSON array, and the WHERE repeats the claimable condition, so a row is only taken if it is
// still claimable when it is written. Exported for the EXPLAIN QUERY PLAN test and the docs.
const ClaimBatchSQL = `UPDATE OutboxMessages
   SET Status = 'Processing', LockedBy = :worker, LockedUntilUtc = :until,
       Attempts = Attempts + 1, LeaseVersion = LeaseVersion + 1
 WHERE Id IN (SELECT value FROM json_each(:ids))
   AND ` + claimable + `
RETURNING Id, IdempotencyKey, Type, Payload, LeaseVersion, CreatedAtUtc`

// ClaimBatch claims up to k of the oldest claimable messages for req.Worker in one transaction
// (BEGIN IMMEDIATE), with the same lease as Claim: LockedBy = req.Worker, LockedUntilUtc =
// req.Until, Attempts and LeaseVersion + 1. The messages come back in claim order (oldest
// first); none when nothing is claimable at req.Now. req.Key must be empty: a batch takes the
// oldest rows, not a named one.
func (c *Conn) ClaimBatch(ctx context.Context, req engine.ClaimRequest, k int) ([]engine.Message, error) {
	if k < 1 {
		return nil, fmt.Errorf("claim batch: k = %d, want at least 1", k)
	}
	if req.Key != "" {
		return nil, fmt.Errorf("claim batch: a batch cannot claim a named message (%s)", req.Key)
	}
	var out []engine.Message
	err := c.inTx(ctx, func(t txn) error {
		var err error
		out, err = c.claimBatchTx(t, req, k)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Conn) claimBatchTx(t txn, req engine.ClaimRequest, k int) ([]engine.Message, error) {
	now, until := req.Times() // with the write lock held (engine: "Time in a request")
	found, err := t.candidates(FormatTime(now), k)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	ids := make([]int64, len(found))
	for i, c := range found {
		ids[i] = c.m.ID
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("claim batch: %w", err)
	}
	rows, err := t.query(ClaimBatchSQL, sql.Named("worker", req.Worker),
		sql.Named("until", FormatTime(until)), sql.Named("now", FormatTime(now)), sql.Named("ids", string(idsJSON)))
	if err != nil {
		return nil, fmt.Errorf("claim batch: %w", describe(err))
	}
	defer rows.Close()
	got, err := shared.All(rows, "claim batch", describe, shared.ScanClaimed[string](until.UTC()))
	if err != nil {
		return nil, err
	}
	return shared.InClaimOrder(got, strings.Compare), nil
}

// FinalizeAndClaim is the fused step: it finalizes fin exactly as Finalize does and claims the
// next message exactly as Claim does, in one transaction (BEGIN IMMEDIATE), so a busy worker
// pays for one transaction per message instead of two.
//
// When fin's guarded UPDATE changes no row (the lease was lost), the whole transaction rolls
// back, the payment update with it, as in Finalize; the claim is then made on its own, in a
// second transaction, and both results are returned (FinalizeResult.Committed false). Any
// error rolls back both halves: nothing was finalized and nothing was claimed.
func (c *Conn) FinalizeAndClaim(ctx context.Context, fin engine.FinalizeRequest, next engine.ClaimRequest) (engine.FinalizeResult, engine.ClaimResult, error) {
	var (
		fres engine.FinalizeResult
		cres engine.ClaimResult
	)
	err := c.inTx(ctx, func(t txn) error {
		var err error
		if fres, err = c.finalizeTx(t, fin); err != nil {
			return err
		}
		cres, err = c.claimTx(t, next)
		return err
	})
	return shared.Fused(fres, cres, err, func() (engine.ClaimResult, error) { return c.Claim(ctx, next) })
}

// The savepoint around each finalize of FinalizeBatch.
const (
	savepointSQL  = `SAVEPOINT finalize`
	rollbackToSQL = `ROLLBACK TO finalize`
	releaseSQL    = `RELEASE finalize`
)

// FinalizeBatch finalizes each of reqs exactly as Finalize does, all in one transaction (BEGIN
// IMMEDIATE): the counterpart of ClaimBatch. Each finalize runs inside a savepoint of its own,
// so one whose guarded UPDATE changes no row is rolled back to that savepoint, its payment
// update with it, and comes back with Committed false, while the others commit. results[i] is
// the outcome of reqs[i]. An error rolls back the whole batch and returns no results.
func (c *Conn) FinalizeBatch(ctx context.Context, reqs []engine.FinalizeRequest) ([]engine.FinalizeResult, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	out := make([]engine.FinalizeResult, len(reqs))
	err := c.inTx(ctx, func(t txn) error {
		for i, req := range reqs {
			if _, err := t.exec(savepointSQL); err != nil {
				return fmt.Errorf("finalize batch: savepoint: %w", describe(err))
			}
			res, err := c.finalizeTx(t, req)
			switch {
			case errors.Is(err, shared.ErrRolledBack):
				if _, err := t.exec(rollbackToSQL); err != nil {
					return fmt.Errorf("finalize batch: roll back %s: %w", req.Message.IdempotencyKey, describe(err))
				}
			case err != nil:
				return err
			default:
				res.Committed = true
			}
			if _, err := t.exec(releaseSQL); err != nil {
				return fmt.Errorf("finalize batch: release: %w", describe(err))
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
