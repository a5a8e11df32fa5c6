package store

import (
	"context"
	"database/sql"

	"leaselab/engine"
)

// The pruner's UPDATE (engine/prune.go): the message failed, parked as DeadLettered, guarded as
// the rescue is (everything the pruner saw, checked again) or not (the row by Id alone: even a
// Processed row is failed, finished and failed at once).
const (
	pruneGuardedSQL = `UPDATE OutboxMessages
   SET Status = 'DeadLettered', ProcessedAtUtc = :now, LockedUntilUtc = NULL, LastError = :error
 WHERE Id = :id AND Status = 'Processing' AND LockedUntilUtc < :now
   AND LockedBy = :owner AND LeaseVersion = :version`
	pruneUnguardedSQL = `UPDATE OutboxMessages
   SET Status = 'DeadLettered', ProcessedAtUtc = :now, LockedUntilUtc = NULL, LastError = :error
 WHERE Id = :id`
)

// prune is Rescue for a pruner (req.Fail): rows affected say whether it failed the message.
func (c *Conn) prune(ctx context.Context, req engine.RescueRequest) (engine.RescueResult, error) {
	update := pruneUnguardedSQL
	args := []any{sql.Named("id", req.Seen.ID), sql.Named("now", FormatTime(req.Now)), sql.Named("error", engine.PruneError)}
	if req.Guarded {
		update = pruneGuardedSQL
		args = append(args, sql.Named("owner", req.Seen.LockedBy), sql.Named("version", req.Seen.LeaseVersion))
	}
	return c.rescueRow(ctx, "prune", req.Seen.IdempotencyKey, update, args)
}
