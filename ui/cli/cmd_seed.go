package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	"leaselab/engine"
)

// workerNameRE is what a worker process's --name may be: it goes into LockedBy.
var workerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

const seedUsage = `Usage: leaselab seed --db FILE [--messages N] [--reset]

Creates FILE as a leaselab database and writes N payments, each with its outbox message in one
transaction, for worker processes to share. A FILE that already holds rows is refused unless
--reset is given; a file that is not leaselab's is never changed.
`

func cmdSeed(ctx context.Context, b Backends, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("seed", seedUsage, stderr)
	path := fs.String("db", "", "the database file (required)")
	n := fs.Int("messages", 6, "number of payments and outbox messages")
	reset := fs.Bool("reset", false, "empty FILE first when it is a leaselab database that holds rows")
	if err := parseSharedDB(fs, args, path); err != nil {
		return err
	}
	if *n < 1 || *n > engine.MaxMessages {
		return usageError{fmt.Errorf("--messages %d: want 1 to %d", *n, engine.MaxMessages)}
	}
	db, err := createShared(ctx, b, *path, *reset)
	if err != nil {
		return err
	}
	defer db.Close()
	if pg, ok := db.(runSchemas); ok {
		noteSchemas(stderr, pg.Swept(), nil) // --reset drops the runs' leftover schemas
	}
	// Many rows a transaction: the same rows engine.Seed writes one payment at a time.
	if err := db.SeedBulk(ctx, *n, time.Now().UTC()); err != nil {
		var ps *engine.PartialSeedError
		if errors.As(err, &ps) && ps.Written > 0 {
			// Said whatever stopped it, an interrupt included (whose own line follows).
			fmt.Fprintf(stderr, "leaselab seed: partial: %s holds the first %d of %d payments; leaselab seed --reset --db %s starts again\n",
				db.Path(), ps.Written, ps.Of, *path)
		}
		return err
	}
	fmt.Fprintf(stdout, "seeded %d payments with their outbox messages into %s\n", *n, db.Path())
	return nil
}
