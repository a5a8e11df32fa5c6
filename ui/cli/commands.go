package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// The one table of leaselab's commands: dispatch runs them, "leaselab help" lists them, and
// "leaselab help COMMAND" explains each. A list written out by hand elsewhere forgot serve and
// redrive.

// command is one of leaselab's commands.
type command struct {
	name string
	// synopsis is how it is called, after "leaselab " ("run NAME|FILE"; the lab's is "[flags]":
	// it is what leaselab does with no command); about is what it does, one line or more.
	synopsis string
	about    []string
	run      func(ctx context.Context, b Backends, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error)
}

// commands are leaselab's commands, in the order the usage lists them. "help" is dispatch's
// own, and is not a command of the table.
var commands = []command{
	{"lab", "[flags]", []string{"open the lab (a terminal screen) on the default scenario"},
		func(ctx context.Context, b Backends, args []string, in io.Reader, out, errw io.Writer) (int, error) {
			return exitOK, cmdLab(ctx, b, args, in, out, errw)
		}},
	{"run", "run NAME|FILE", []string{"run a scenario headless; print and save its report"},
		func(ctx context.Context, b Backends, args []string, _ io.Reader, out, errw io.Writer) (int, error) {
			return ranTo(cmdRun(ctx, b, args, out, errw))
		}},
	{"list", "list", []string{"list the built-in scenarios"},
		func(_ context.Context, _ Backends, args []string, _ io.Reader, out, errw io.Writer) (int, error) {
			return exitOK, cmdList(args, out, errw)
		}},
	{"stress", "stress [flags]", []string{"real goroutine workers, random crashes, pauses and clock jumps"},
		func(ctx context.Context, b Backends, args []string, _ io.Reader, out, errw io.Writer) (int, error) {
			return ranTo(cmdStress(ctx, b, args, out, errw))
		}},
	{"seed", "seed --db FILE", []string{"create a shared database (--reset: empty one) and fill it with payments"},
		func(ctx context.Context, b Backends, args []string, _ io.Reader, out, errw io.Writer) (int, error) {
			return exitOK, cmdSeed(ctx, b, args, out, errw)
		}},
	{"worker", "worker --db FILE --name W", []string{"run one worker process against a shared database"},
		func(ctx context.Context, b Backends, args []string, _ io.Reader, out, errw io.Writer) (int, error) {
			return exitOK, cmdWorker(ctx, b, args, out, errw)
		}},
	{"watch", "watch --db FILE", []string{"watch a shared database live, read-only, as the lab shows it"},
		func(ctx context.Context, b Backends, args []string, in io.Reader, out, errw io.Writer) (int, error) {
			return exitOK, cmdWatch(ctx, b, args, in, out, errw)
		}},
	{"serve", "serve [flags]", []string{"serve the lab over SSH: one lab per connection, for a room"},
		func(ctx context.Context, b Backends, args []string, _ io.Reader, out, errw io.Writer) (int, error) {
			return exitOK, cmdServe(ctx, b, args, out, errw)
		}},
	{"redrive", "redrive --db FILE --key KEY", []string{"move a dead-lettered message back to Pending (refused otherwise)"},
		func(ctx context.Context, b Backends, args []string, _ io.Reader, out, errw io.Writer) (int, error) {
			return ranTo(cmdRedrive(ctx, b, args, out, errw))
		}},
	{"explore", "explore NAME|FILE", []string{"search every schedule, breadth-first, for a shortest one that",
		"breaks a safety check (--out FILE writes it as a scenario)"},
		func(ctx context.Context, b Backends, args []string, in io.Reader, out, errw io.Writer) (int, error) {
			return ranTo(cmdExplore(ctx, b, args, in, out, errw))
		}},
	{"share", "share NAME|FILE", []string{"print a short code of a scenario and its settings",
		"(leaselab --code CODE opens it; the lab's S, a moment's)"},
		func(_ context.Context, _ Backends, args []string, _ io.Reader, out, errw io.Writer) (int, error) {
			return exitOK, cmdShare(args, out, errw)
		}},
}

// lookup is the command called name, or nil.
func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// commandNames are the names of every command, in the table's order.
func commandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

// mainUsage is leaselab's usage: every command of the table, then help.
func mainUsage() string {
	var b strings.Builder
	b.WriteString("leaselab: competing workers, one SQLite outbox, and the lease that makes them safe.\n\nUsage:\n")
	line := func(synopsis string, about []string) {
		const col = 28 // the descriptions' column, after "  leaselab … "
		call := "leaselab " + synopsis
		if len(call) > col {
			fmt.Fprintf(&b, "  %s\n%*s", call, col+3, "")
		} else {
			fmt.Fprintf(&b, "  %-*s ", col, call)
		}
		b.WriteString(strings.Join(about, "\n"+strings.Repeat(" ", col+3)) + "\n")
	}
	for _, c := range commands {
		line(c.synopsis, c.about)
	}
	line("help [COMMAND]", []string{"this text, or a command's flags"})
	b.WriteString(`
Run "leaselab COMMAND --help" for a command's flags.
Exit codes: 0 expectations hold, 1 they do not, 2 usage or scenario error, 3 environment error,
130 interrupted (Ctrl-C; 128 + the signal's number for SIGHUP, SIGQUIT and SIGTERM; serve stops on
them with 0).
`)
	return b.String()
}
