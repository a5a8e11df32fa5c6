package storetest

import (
	"context"
	"time"

	"leaselab/engine"
)

// renew and take are the suite's only calls of Conn.Renew and Conn.TakeUnconditional, so that a
// change of their signatures (main's RenewRequest and TakeRequest, see
// store/postgres/MERGE-main.patch) changes this file alone.

// renew is worker's heartbeat on m with fixed times: the new lease end until.
func renew(ctx context.Context, c engine.Conn, m engine.Message, worker string, until time.Time) (bool, error) {
	res, err := c.Renew(ctx, engine.RenewRequest{Worker: worker, Message: m, LeaseTimes: engine.LeaseTimes{Now: until, Until: until}})
	return res.Renewed, err
}

// take is the non-atomic claim's unconditional take of row id with fixed times.
func take(ctx context.Context, c engine.Conn, id int64, worker string, until time.Time) (engine.Message, error) {
	res, err := c.TakeUnconditional(ctx, engine.TakeRequest{ID: id, Worker: worker, LeaseTimes: engine.LeaseTimes{Now: until, Until: until}})
	return res.Message, err
}
