package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"leaselab/engine"
)

const redriveUsage = `Usage: leaselab redrive --db FILE|URL --key KEY

Moves the dead-lettered message KEY of a shared database back to Pending, claimable at once,
with its attempts reset (its LastError is kept). Guarded: one conditional UPDATE that changes
the row only while it is DeadLettered; a message that is not (Pending, Processing, Processed)
or does not exist is refused, nothing is changed, and the exit code is 1.
`

// cmdRedrive is leaselab redrive: the guarded redrive of one dead letter (engine.Redriver).
func cmdRedrive(ctx context.Context, b Backends, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("redrive", redriveUsage, stderr)
	path := fs.String("db", "", "the shared database: a SQLite file or a postgres:// URL (required)")
	key := fs.String("key", "", "the idempotency key of the dead-lettered message, e.g. PAY-004 (required)")
	if err := parseSharedDB(fs, args, path); err != nil {
		return exitOK, err
	}
	if *key == "" {
		return exitOK, usageError{errors.New("redrive: --key KEY is required (the dead-lettered message, e.g. PAY-004)")}
	}
	db, err := openShared(ctx, b, *path)
	if err != nil {
		return exitOK, err
	}
	defer db.Close()
	r := db.Capabilities().Redrive
	if r == nil {
		return exitOK, fmt.Errorf("redrive: the database %s cannot redrive (no dead letters before schema 4)", db.Path())
	}
	if err := r.Redrive(ctx, *key); err != nil {
		var env *engine.EnvError
		if errors.As(err, &env) || !refused(err) {
			return exitOK, err
		}
		fmt.Fprintf(stderr, "leaselab redrive: refused: %v (only a DeadLettered message can be redriven)\n", err)
		return exitExpect, nil
	}
	fmt.Fprintf(stdout, "redriven %s in %s: Pending, claimable at once, attempts reset\n", *key, db.Path())
	return exitOK, nil
}

// refused says whether a redrive's error is its guard's refusal (not dead-lettered, no such
// message) rather than a failure of the database.
func refused(err error) bool {
	return errors.Is(err, engine.ErrNotDeadLettered) || errors.Is(err, engine.ErrNoSuchMessage)
}
