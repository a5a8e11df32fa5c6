package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"leaselab/engine"
)

// StatusOnlyFinalizeManySQL is finalizeManySQL with its per-row guard cut down to the row's
// status (m.Status = 'Processing'), as a completer that checks the state alone writes it (River's
// JobSetStateIfRunningMany): the benchmark of the fence's cost (fence_bench_test.go) runs both.
// It is "" when finalizeManySQL no longer has the guard this copy cuts.
var StatusOnlyFinalizeManySQL = func() string {
	const guard = `AND m.Status = 'Processing' AND m.LockedBy = r.worker
     AND (NOT r.fenced OR m.LeaseVersion = r.version)`
	if !strings.Contains(finalizeManySQL, guard) {
		return ""
	}
	return strings.Replace(finalizeManySQL, guard, `AND m.Status = 'Processing'`, 1)
}()

// FinalizeManyWith runs query, finalizeManySQL or a copy of it, with the arguments
// finalizeMany gives it for reqs, and returns how many messages it finalized.
func (c *Conn) FinalizeManyWith(ctx context.Context, query string, reqs []engine.FinalizeRequest) (int, error) {
	n := len(reqs)
	var (
		ids, versions           = make([]int64, n), make([]int64, n)
		keys, workers, statuses = make([]string, n), make([]string, n), make([]string, n)
		txIDs                   = make([]*string, n)
		fenced                  = make([]bool, n)
		times                   = make([]time.Time, n)
	)
	for i, r := range reqs {
		ids[i], keys[i], workers[i], versions[i] = r.Message.ID, r.Message.IdempotencyKey, r.Worker, r.Message.LeaseVersion
		fenced[i], times[i], statuses[i] = r.Fencing, at(r.Time()), r.PaymentStatus
		if r.TransactionID != "" {
			txIDs[i] = &reqs[i].TransactionID
		}
	}
	rows, err := c.conn.Query(ctx, query, ids, keys, workers, versions, fenced, times, statuses, txIDs)
	if err != nil {
		return 0, fmt.Errorf("finalize batch: %w", describe(err))
	}
	defer rows.Close()
	done := 0
	for rows.Next() {
		var (
			id     int64
			ok     bool
			status string
			owner  *string
			ver    int64
		)
		if err := rows.Scan(&id, &ok, &status, &owner, &ver); err != nil {
			return 0, err
		}
		if ok {
			done++
		}
	}
	return done, rows.Err()
}
