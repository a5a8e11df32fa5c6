package postgres

import (
	"context"
	"strings"

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

// FinalizeManyWith runs query, finalizeManySQL or a copy of it, as finalizeMany runs
// finalizeManySQL for reqs, and returns how many messages it finalized.
func (c *Conn) FinalizeManyWith(ctx context.Context, query string, reqs []engine.FinalizeRequest) (int, error) {
	out, err := c.finalizeManyWith(ctx, query, reqs)
	done := 0
	for _, r := range out {
		if r.Committed {
			done++
		}
	}
	return done, err
}
