package postgres

import (
	"context"
	"fmt"

	"leaselab/engine"
)

// The pruner's UPDATE (engine/prune.go), as store/prune.go writes it for SQLite.
const (
	pruneGuardedSQL = `UPDATE OutboxMessages
   SET Status = 'DeadLettered', ProcessedAtUtc = $2, LockedUntilUtc = NULL, LastError = $3
 WHERE Id = $1 AND Status = 'Processing' AND LockedUntilUtc < $2 AND LockedBy = $4 AND LeaseVersion = $5`
	pruneUnguardedSQL = `UPDATE OutboxMessages
   SET Status = 'DeadLettered', ProcessedAtUtc = $2, LockedUntilUtc = NULL, LastError = $3
 WHERE Id = $1`
)

// prune is Rescue for a pruner (req.Fail): rows affected say whether it failed the message.
func (c *Conn) prune(ctx context.Context, req engine.RescueRequest) (engine.RescueResult, error) {
	update, args := pruneUnguardedSQL, []any{req.Seen.ID, at(req.Now), engine.PruneError}
	if req.Guarded {
		update = pruneGuardedSQL
		args = append(args, req.Seen.LockedBy, req.Seen.LeaseVersion)
	}
	tag, err := c.conn.Exec(context.WithoutCancel(ctx), update, args...)
	if err != nil {
		return engine.RescueResult{}, fmt.Errorf("prune %s: %w", req.Seen.IdempotencyKey, describe(err))
	}
	return engine.RescueResult{Rescued: tag.RowsAffected() == 1}, nil
}
