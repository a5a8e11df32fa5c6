package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"leaselab/engine"

	"github.com/jackc/pgx/v5"
)

// The guarded finalizes in few round trips. A guarded Finalize is one statement
// (finalizeOneSQL, onestatement.go): one round trip where finalizeTx's four statements cost
// five. The fused step sends BEGIN and that statement in one round trip and the claim and the
// COMMIT in a second; a guarded FinalizeBatch is finalizeManySQL, every message of the batch in
// one statement and one round trip. A batch that names a message twice takes the savepoint
// pipeline below (one round trip per message), whose statements are finalizeTx's. Fault injection (HoldFinalize), a clock (read after the locks)
// and unguarded finalizes take the plain path, finalizeTx.

// pipelined reports whether every req can take the pipelined path on this connection.
func (c *Conn) pipelined(reqs ...engine.FinalizeRequest) bool {
	if c.hold != nil {
		return false
	}
	for _, r := range reqs {
		// A clock must be read after the locks are held: the pipeline sends its time first.
		if !r.OwnershipCheck || r.Clock != nil {
			return false
		}
	}
	return true
}

// queueFinalize adds req's payment and outbox UPDATEs to b.
func queueFinalize(b *pgx.Batch, req engine.FinalizeRequest) {
	var txID *string
	if req.TransactionID != "" {
		txID = &req.TransactionID
	}
	b.Queue(finalizePaymentSQL, req.PaymentStatus, txID, req.Message.IdempotencyKey)
	update, args := finalizeOutbox(req, at(req.Time()))
	b.Queue(update, args...)
}

// readFinalize reads the results queueFinalize queued: ok when the guarded UPDATE took the row.
func readFinalize(br pgx.BatchResults, req engine.FinalizeRequest) (res engine.FinalizeResult, ok bool, err error) {
	key := req.Message.IdempotencyKey
	res.At = at(req.Time()) // fixed: Clock is nil on this path
	if _, err := br.Exec(); err != nil {
		return res, false, fmt.Errorf("finalize %s: update payment: %w", key, describe(err))
	}
	var version int64
	switch err := br.QueryRow().Scan(&version); {
	case errors.Is(err, pgx.ErrNoRows):
		return res, false, nil
	case err != nil:
		return res, false, fmt.Errorf("finalize %s: update outbox: %w", key, describe(err))
	}
	return engine.FinalizeResult{RowsAffected: 1, At: at(req.Time()), PriorStatus: engine.StatusProcessing, PriorOwner: req.Worker, PriorVersion: version}, true, nil
}

// closeBatch closes br, keeping the first error.
func closeBatch(br pgx.BatchResults, err error) error {
	if cerr := br.Close(); err == nil && cerr != nil {
		err = describe(cerr)
	}
	return err
}

// rollbackNow ends the open transaction; an error here leaves the connection to be closed by its
// owner (the server rolls back then).
func (c *Conn) rollbackNow(ctx context.Context) { c.conn.Exec(ctx, "ROLLBACK") }

// finalizePipelined is Finalize for a guarded request: one statement (finalizeOneSQL).
func (c *Conn) finalizePipelined(ctx context.Context, req engine.FinalizeRequest) (engine.FinalizeResult, error) {
	return c.finalizeOne(ctx, req)
}

// beginFinalize sends BEGIN and req's one-statement finalize in one round trip. When the guard
// holds (ok) the transaction is left open for the caller to add to and commit; otherwise it has
// been rolled back, and res says why (read inside the transaction, by the statement itself).
func (c *Conn) beginFinalize(ctx context.Context, req engine.FinalizeRequest) (res engine.FinalizeResult, ok bool, err error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	queueFinalizeOne(b, req)
	br := c.conn.SendBatch(ctx, b)
	if _, err = br.Exec(); err != nil {
		err = fmt.Errorf("begin: %w", describe(err))
	} else {
		res, ok, err = scanFinalizeOne(br.QueryRow(), req)
	}
	if err = closeBatch(br, err); err != nil {
		c.rollbackNow(ctx)
		return engine.FinalizeResult{}, false, err
	}
	if !ok {
		c.rollbackNow(ctx)
	}
	return res, ok, nil
}

// fusedPipelined is FinalizeAndClaim for a guarded finalize and an unkeyed claim: the
// finalize's round trip (BEGIN and its one statement), then the claim and the COMMIT in a
// second. Only a claim that took nothing reads why (whyNothing, as Claim does: after its
// statement, on its own), so the common step sends no read of every unfinished row.
func (c *Conn) fusedPipelined(ctx context.Context, fin engine.FinalizeRequest, next engine.ClaimRequest) (engine.FinalizeResult, engine.ClaimResult, error) {
	fres, ok, err := c.beginFinalize(ctx, fin)
	if err != nil {
		return engine.FinalizeResult{}, engine.ClaimResult{}, err
	}
	if !ok {
		cres, err := c.Claim(ctx, next)
		if err != nil {
			return fres, engine.ClaimResult{}, err
		}
		return fres, cres, nil
	}
	now, until := reqTimes(next)
	b := &pgx.Batch{}
	b.Queue(ClaimSQL, now, next.Worker, until)
	b.Queue("COMMIT")
	br := c.conn.SendBatch(ctx, b)
	cres, won, err := readClaim(br, until)
	if err == nil {
		if _, err = br.Exec(); err != nil {
			err = fmt.Errorf("commit: %w", describe(err))
		}
	}
	if err = closeBatch(br, err); err != nil {
		c.rollbackNow(ctx)
		return engine.FinalizeResult{}, engine.ClaimResult{}, err
	}
	fres.Committed = true
	if !won {
		if cres, err = whyNothing(ctx, c.conn); err != nil {
			return fres, engine.ClaimResult{}, err
		}
	}
	cres.At = now
	return fres, cres, nil
}

// readClaim reads a queued ClaimSQL: won, or nothing taken.
func readClaim(br pgx.BatchResults, until time.Time) (res engine.ClaimResult, won bool, err error) {
	var (
		m         engine.Message
		prevOwner *string
		prevUntil *time.Time
	)
	err = br.QueryRow().Scan(&m.ID, &m.IdempotencyKey, &m.Type, &m.Payload, &m.LeaseVersion, &prevOwner, &prevUntil)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return engine.ClaimResult{}, false, nil
	case err != nil:
		return engine.ClaimResult{}, false, fmt.Errorf("claim: %w", describe(err))
	}
	m.LockedUntil = until
	return engine.ClaimResult{Outcome: engine.ClaimWon, Message: m, PrevOwner: str(prevOwner), PrevUntil: fromDB(prevUntil)}, true, nil
}

// finalizeBatchPipelined is FinalizeBatch for guarded requests: finalizeMany when no message
// is named twice; otherwise one round trip per finalize, each carrying the previous one's
// RELEASE or ROLLBACK TO its savepoint, then SAVEPOINT and its two UPDATEs, and a last one
// carrying the last decision and the COMMIT.
func (c *Conn) finalizeBatchPipelined(ctx context.Context, reqs []engine.FinalizeRequest) ([]engine.FinalizeResult, error) {
	if oneStatementBatch(reqs) {
		return c.finalizeMany(ctx, reqs)
	}
	out := make([]engine.FinalizeResult, len(reqs))
	decision := "BEGIN"
	for _, i := range keyOrder(reqs) {
		req := reqs[i]
		b := &pgx.Batch{}
		b.Queue(decision)
		b.Queue(savepointSQL)
		queueFinalize(b, req)
		br := c.conn.SendBatch(ctx, b)
		var (
			res engine.FinalizeResult
			ok  bool
			err error
		)
		if _, err = br.Exec(); err == nil {
			if _, err = br.Exec(); err == nil {
				res, ok, err = readFinalize(br, req)
			}
		}
		if err = closeBatch(br, err); err == nil && !ok {
			err = readPrior(ctx, c.conn, req.Message, &res)
		}
		if err != nil {
			c.rollbackNow(ctx)
			return nil, fmt.Errorf("finalize batch: %w", err)
		}
		res.Committed = ok
		out[i] = res
		decision = releaseSQL
		if !ok {
			decision = rollbackToSQL
		}
	}
	b := &pgx.Batch{}
	b.Queue(decision)
	b.Queue("COMMIT")
	if err := c.conn.SendBatch(ctx, b).Close(); err != nil {
		c.rollbackNow(ctx)
		return nil, fmt.Errorf("finalize batch: commit: %w", describe(err))
	}
	return out, nil
}

// The savepoint around each finalize of the pipelined FinalizeBatch. ROLLBACK TO leaves the
// savepoint in place; the next SAVEPOINT of the same name hides it, and COMMIT ends them all.
const (
	savepointSQL  = `SAVEPOINT finalize`
	rollbackToSQL = `ROLLBACK TO SAVEPOINT finalize`
	releaseSQL    = `RELEASE SAVEPOINT finalize`
)
