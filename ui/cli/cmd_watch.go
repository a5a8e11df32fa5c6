package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"leaselab/ui"
)

const watchUsage = `Usage: leaselab watch --db FILE [--interval 200ms]

Opens the lab read-only on a database that worker processes share (made with "leaselab seed",
worked by "leaselab worker" in other terminals): every row's Status, LockedBy and
LockedUntilUtc with its lease bar against the wall clock, the counts, the processing rate, and
who holds what. It never writes. It needs a terminal; p pauses the polling, q quits.
--theme projector draws it in high contrast, for the screen a room watches.
`

func cmdWatch(ctx context.Context, b Backends, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("watch", watchUsage, stderr)
	path := fs.String("db", "", "the shared database file (required; made by leaselab seed)")
	interval := fs.Duration("interval", 200*time.Millisecond, "how often to read the database")
	var theme string
	registerTheme(fs, &theme)
	if err := parseSharedDB(fs, args, path); err != nil {
		return err
	}
	if err := checkTheme(theme); err != nil {
		return usageError{err}
	}
	if *interval < 10*time.Millisecond {
		return usageError{fmt.Errorf("--interval %s: want at least 10ms", *interval)}
	}
	// Check first: a file that is missing or not ours fails the same way with or without a
	// terminal, and nothing is opened (not even a -shm made) before the terminal is known.
	if err := b.File.CheckOpen(ctx, *path); err != nil {
		return err
	}
	if !isTerminal(stdin) || !isTerminal(stdout) {
		return usageError{fmt.Errorf("watch needs a terminal (stdin and stdout); in a script, read the database with sqlite3 %s \"select * from OutboxMessages\"", *path)}
	}
	db, err := openWatched(ctx, b, *path)
	if err != nil {
		return err
	}
	defer db.Close()
	return ui.Watch(ctx, ui.WatchConfig{DB: db, Path: db.Path(), Interval: *interval, Theme: theme, Now: time.Now, In: stdin, Out: stdout})
}
