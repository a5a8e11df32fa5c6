// Command leaselab is a terminal lab in which competing workers fight over the rows of a real
// SQLite outbox, and headless runs that print the lesson's reports, checks and verdicts.
//
//	leaselab                     open the lab on the default scenario
//	leaselab run NAME|FILE       run a scenario headless; print and save its report
//	leaselab list                list the built-in scenarios
//
// Exit codes: 0 the scenario's expectations hold; 1 they do not; 2 usage or scenario errors;
// 3 environment errors (the database file or the report folder).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"leaselab/engine"
	"leaselab/store"
)

// Exit codes.
const (
	exitOK       = 0
	exitExpect   = 1
	exitUsage    = 2
	exitEnvError = 3
)

// usageError is a mistake in how leaselab was called or in a scenario.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "lab"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	} else if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stdout, mainUsage)
		fmt.Fprintln(stdout, "\nThe lab's flags: leaselab lab --help.")
		return exitOK
	}
	var err error
	switch cmd {
	case "lab":
		err = cmdLab(ctx, args, stdin, stdout, stderr)
	case "run":
		var code int
		code, err = cmdRun(ctx, args, stdout, stderr)
		if err == nil {
			return code
		}
	case "list":
		err = cmdList(args, stdout, stderr)
	case "seed":
		err = cmdSeed(ctx, args, stdout, stderr)
	case "worker":
		err = cmdWorker(ctx, args, stdout, stderr)
	case "watch":
		err = cmdWatch(ctx, args, stdin, stdout, stderr)
	case "serve":
		err = cmdServe(ctx, args, stdout, stderr)
	case "stress":
		var code int
		code, err = cmdStress(ctx, args, stdout, stderr)
		if err == nil {
			return code
		}
	case "help":
		fmt.Fprint(stdout, mainUsage)
		return exitOK
	default:
		err = usageError{fmt.Errorf("unknown command %q", cmd)}
	}
	return report(err, stderr)
}

// report prints err as one line and maps it to an exit code.
func report(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "leaselab: %v\n", err)
	var ue usageError
	var pe *engine.ParseError
	var se *engine.ScriptError
	switch {
	case errors.As(err, &ue), errors.As(err, &pe):
		if ue.err != nil && strings.HasPrefix(ue.Error(), "unknown command") {
			fmt.Fprint(stderr, mainUsage)
		}
		return exitUsage
	case errors.As(err, &se):
		// A script step that could not be carried out is the scenario's fault, unless the
		// database under it failed.
		var env *store.EnvError
		if errors.As(err, &env) || errors.Is(err, engine.ErrBusy) {
			return exitEnvError
		}
		return exitUsage
	}
	return exitEnvError
}

const mainUsage = `leaselab: competing workers, one SQLite outbox, and the lease that makes them safe.

Usage:
  leaselab [flags]             open the lab (a terminal screen) on the default scenario
  leaselab run NAME|FILE       run a scenario headless; print and save its report
  leaselab list                list the built-in scenarios
  leaselab stress [flags]      real goroutine workers, random crashes, pauses and clock jumps
  leaselab seed --db FILE      create (or reset) a shared database and fill it with payments
  leaselab worker --db FILE --name W
                               run one worker process against a shared database
  leaselab watch --db FILE     watch a shared database live, read-only, as the lab shows it
  leaselab serve [flags]       serve the lab over SSH: one lab per connection, for a room
  leaselab help                this text

Run "leaselab COMMAND --help" for a command's flags.
Exit codes: 0 expectations hold, 1 they do not, 2 usage or scenario error, 3 environment error.
`
