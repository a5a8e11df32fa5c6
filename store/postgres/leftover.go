package postgres

// A run's own schema (CreateTemp) and what becomes of it when the run cannot drop it.
//
// Close drops the schema; when it cannot (the server stopped, the network went), the schema
// stays on the server, and Close says so (LeftoverError). The next CreateTemp, or a Create
// with Reset, on that server drops such leftovers: sweepLeftovers.
//
// What makes a schema a leftover, and not the schema of a run still going on another host:
//   - its name starts with leaselab_run_ and its comment is runMark, which only CreateTemp
//     writes (a schema the user made, or one of a leaselab older than this one, has another);
//   - its contents are exactly what schema.sql builds (checkContents): a table or trigger
//     someone added keeps it;
//   - no session holds its run lock: CreateTemp takes a session-level advisory lock keyed by
//     the schema's name before it creates the schema, on a connection of its own that it holds
//     until Close has dropped it. PostgreSQL releases the lock when that session ends, however
//     it ends (the process killed, the server restarted), so a free lock means the run is over.
//     A sweeper takes the same lock (pg_try_advisory_lock, never waiting) before it drops, so
//     two sweepers, or a sweeper and a run starting under that name, never both proceed.
//
// The lock is a 64-bit key (hashtextextended of the name), in the key space of one-argument
// advisory locks; a collision with another program's key would only make a leftover look in
// use (kept) or a new run's name look taken (refused): never a drop of a live schema. A run
// whose lock connection alone an administrator terminates (pg_terminate_backend on that one
// backend) while its other connections go on loses that protection for the rest of the run.

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// runMark is the comment CreateTemp leaves on a run's own schema: leaselab's, and dropped at the
// run's end (or, when the run could not, by the next run: sweepLeftovers).
const runMark = schemaMark + "; made by one run, dropped at its end"

// runLockSQL takes a run's lock ($1 is the schema's name) without waiting, and says whether it
// got it.
const runLockSQL = `SELECT pg_try_advisory_lock(hashtextextended('leaselab_run:' || $1, 0))`

// runUnlockSQL releases it.
const runUnlockSQL = `SELECT pg_advisory_unlock(hashtextextended('leaselab_run:' || $1, 0))`

// LeftoverError is Close's error when the run's own schema could not be dropped: it is left on
// the server until the next run there (or a --reset) drops it.
type LeftoverError struct {
	Schema string
	Err    error
}

func (e *LeftoverError) Error() string {
	return fmt.Sprintf("the run's schema %s is left on the server (DROP SCHEMA failed: %v); the next leaselab run on this server, or a --reset, drops it",
		e.Schema, e.Err)
}

func (e *LeftoverError) Unwrap() error { return e.Err }

// lockRun takes the run lock of schema on a connection of its own, taken out of the pool, and
// returns that connection: the lock is held until it is closed.
func lockRun(ctx context.Context, pool *pgxpool.Pool, schema string) (*pgx.Conn, error) {
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := pc.Hijack()
	var got bool
	if err := conn.QueryRow(ctx, runLockSQL, schema).Scan(&got); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("lock the run's schema %s: %w", schema, err)
	}
	if !got {
		conn.Close(ctx)
		return nil, fmt.Errorf("the run's schema %s: another run holds its name; try again", schema)
	}
	return conn, nil
}

// sweepLeftovers drops the schemas that runs left behind (see the top of this file), except
// own, and returns their names. A schema it cannot be sure of is kept; an error stops the sweep
// and is returned with what was dropped before it.
func sweepLeftovers(ctx context.Context, pool *pgxpool.Pool, own string) ([]string, error) {
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer pc.Release()
	rows, err := pc.Query(ctx, `SELECT nspname FROM pg_namespace
	  WHERE nspname LIKE 'leaselab\_run\_%' AND nspname <> $1 AND obj_description(oid, 'pg_namespace') = $2
	  ORDER BY nspname`, own, runMark)
	if err != nil {
		return nil, fmt.Errorf("look for leftover run schemas: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("look for leftover run schemas: %w", err)
	}
	var dropped []string
	for _, name := range names {
		var free bool
		if err := pc.QueryRow(ctx, runLockSQL, name).Scan(&free); err != nil {
			return dropped, fmt.Errorf("lock the leftover schema %s: %w", name, err)
		}
		if !free {
			continue // a run is using it
		}
		gone, err := dropLeftover(ctx, pc.Conn(), name)
		if _, uerr := pc.Exec(ctx, runUnlockSQL, name); uerr != nil && err == nil {
			err = fmt.Errorf("unlock the leftover schema %s: %w", name, uerr)
		}
		if err != nil {
			return dropped, err
		}
		if gone {
			dropped = append(dropped, name)
		}
	}
	return dropped, nil
}

// dropLeftover drops the schema name, whose run lock the caller holds, when it is still a run's
// own (runMark) and holds exactly leaselab's tables; it reports whether it did.
func dropLeftover(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	dropped := false
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		mark, exists, err := schemaState(ctx, tx, name)
		if err != nil || !exists || mark != runMark {
			return err
		}
		facts, err := schemaFacts(ctx, tx, name)
		if err != nil {
			return err
		}
		if err := checkContents(ctx, tx, name, facts); errors.Is(err, ErrNotOurs) {
			return nil // someone added to it: not leaselab's alone any more
		} else if err != nil && !errors.Is(err, ErrOlderSchema) { // an older leaselab's run: dropped too

			return err
		}
		if _, err := tx.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			return fmt.Errorf("drop the leftover schema %s: %w", name, err)
		}
		dropped = true
		return nil
	})
	return dropped, err
}
