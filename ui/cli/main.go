// Package cli is leaselab's command line, a face of the lab as the terminal screen and the SSH
// server are: the commands (lab, run, list, stress, seed, worker, watch, serve), their flags and
// their exit codes, in one Main that tests call; main calls it through RunWithSignals, which
// turns a stop signal into a cancelled context. It never speaks SQL: the databases come through
// Backends, which main wires.
//
//	leaselab                     open the lab on the default scenario
//	leaselab run NAME|FILE       run a scenario headless; print and save its report
//	leaselab list                list the built-in scenarios
//
// Exit codes: 0 the scenario's expectations hold; 1 they do not; 2 usage or scenario errors;
// 3 environment errors (the database file or the report folder); 128+N ended by signal N
// (130 for Ctrl-C, SIGINT; 129 SIGHUP; 131 SIGQUIT; 143 SIGTERM; 141 SIGPIPE, its output
// closed), after removing its temporary folders.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/engine/words"

	"golang.org/x/sys/unix"
)

// Exit codes.
const (
	exitOK       = 0
	exitExpect   = 1
	exitUsage    = 2
	exitEnvError = 3
	// exitSignal + N: ended by signal N (130 for SIGINT), as shells report it.
	exitSignal = 128
)

// usageError is a mistake in how leaselab was called or in a scenario.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageFlag is a flag set's error as a usageError; --help's flag.ErrHelp stays as it is.
func usageFlag(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err}
}

// Stdio is a command line's standard input, output and error.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// stopSignals are the signals that end leaselab cleanly: Ctrl-C, kill, a closed terminal or a
// dropped ssh (SIGHUP), and Ctrl-\ (SIGQUIT). Each cancels the command's context, so that it
// stops at its next transaction boundary and its deferred cleanup (temporary folders, open
// connections) runs; the exit code is then 128 + the signal's number.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// closedOutput is the cause of a context cancelled because stdout or stderr was closed (SIGPIPE).
var closedOutput = interrupted{syscall.SIGPIPE}

// interrupted is the cause of a context cancelled by a signal.
type interrupted struct{ sig os.Signal }

func (e interrupted) Error() string { return "interrupted by " + signalName(e.sig) }

// code is the exit code a shell expects of a process ended by the signal: 128 + its number.
func (e interrupted) code() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return exitSignal + int(s)
	}
	return exitSignal + int(syscall.SIGINT)
}

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGPIPE:
		return "SIGPIPE (its output was closed)"
	}
	return sig.String()
}

// RunWithSignals is Main with a context that the first of stopSignals cancels: what main runs. A second one
// ends the process at once (the way out of a command that does not stop), after removing the
// temporary folders of its runs' databases (payment data), which the cleanup it cut short
// would have removed.
//
// A closed output (SIGPIPE: "leaselab serve | head", a worker piped into a reader that is gone)
// ends it the same way, with 128+13. Without a handler Go's runtime kills the process at its
// first write to a closed stdout or stderr, before any cleanup; with one, the write fails with
// EPIPE instead. Its handler is never reset: the cleanup that follows may write again.
func RunWithSignals(args []string, stdio Stdio, b Backends) int {
	stderr := stdio.Err
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals...)
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case sig := <-sigs:
				if context.Cause(ctx) == nil || context.Cause(ctx) == closedOutput {
					cancel(interrupted{sig})
					continue
				}
				signal.Reset(stopSignals...)
				removeRunFolders(os.Getpid())
				fmt.Fprintf(stderr, "leaselab: %s again: stopped at once; its temporary folders are removed\n", signalName(sig))
				os.Exit(interrupted{sig}.code())
			case <-pipes:
				if outputClosed(stdio.Out, stdio.Err) {
					cancel(closedOutput) // the first cause stays, if a signal came first
				}
			case <-done:
				signal.Stop(sigs)
				return
			}
		}
	}()
	return Main(ctx, args, stdio, b)
}

// outputClosed says whether stdout or stderr is a pipe or socket whose reader is gone. A
// SIGPIPE also comes of a write to a network connection whose peer went away (a PostgreSQL
// server stopped in the middle of a run): that write fails with EPIPE, and its error says
// so; it is not the output closed. Poll's POLLERR (a pipe with no reader) or POLLHUP (a socket
// shut down) tells them apart. An output that is not a file, or a poll that fails, counts as
// closed, as every SIGPIPE did before.
func outputClosed(outs ...io.Writer) bool {
	var fds []unix.PollFd
	for _, w := range outs {
		f, ok := w.(*os.File)
		if !ok {
			return true
		}
		fds = append(fds, unix.PollFd{Fd: int32(f.Fd()), Events: unix.POLLOUT})
	}
	if _, err := unix.Poll(fds, 0); err != nil {
		return true
	}
	for _, p := range fds {
		if p.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}

// removeRunFolders removes the temporary run folders process pid made (runFolderPrefix).
func removeRunFolders(pid int) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), runFolderPrefix(pid)+"*"))
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}

// Main runs one leaselab command line (args without the program's name) on the databases b
// opens, and returns its exit code. When ctx was cancelled by a signal, whatever the command
// returned, it prints "interrupted by SIG…" and returns 128 + the signal's number: an interrupt
// is neither an environment error nor a "context canceled".
func Main(ctx context.Context, args []string, stdio Stdio, b Backends) int {
	stderr := stdio.Err
	code, err := dispatch(ctx, b, args, stdio.In, stdio.Out, stderr)
	var intr interrupted
	if errors.As(context.Cause(ctx), &intr) && (!(len(args) > 0 && stopsBySignal[args[0]]) || intr == closedOutput) {
		// A server told to stop stops normally; one whose log was closed did not end well.
		fmt.Fprintf(stderr, "leaselab: %v\n", intr)
		return intr.code()
	}
	if errors.Is(err, syscall.EPIPE) {
		// The output was closed and the command stopped on the failed write before SIGPIPE's
		// handler cancelled its context.
		fmt.Fprintf(stderr, "leaselab: %v\n", closedOutput)
		return closedOutput.code()
	}
	if err != nil {
		return report(err, stderr)
	}
	return code
}

// stopsBySignal are the commands a signal ends in the normal way: a server runs until it is
// told to stop, closes every session cleanly, and exits as its work says (0 when all went well).
var stopsBySignal = map[string]bool{"serve": true}

// dispatch runs the command args name: its exit code when it ran to its end, or the error that
// stopped it.
func dispatch(ctx context.Context, b Backends, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	name := "lab"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	} else if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stdout, mainUsage())
		fmt.Fprintln(stdout, "\nThe lab's flags: leaselab lab --help.")
		return exitOK, nil
	}
	if name == "help" {
		switch {
		case len(args) == 0:
			fmt.Fprint(stdout, mainUsage())
			return exitOK, nil
		case len(args) == 1 && lookup(args[0]) != nil:
			return dispatch(ctx, b, []string{args[0], "--help"}, stdin, stdout, stderr)
		}
		return exitOK, usageError{fmt.Errorf("help %s: want \"leaselab help\" or \"leaselab help COMMAND\" (%s)",
			strings.Join(args, " "), strings.Join(commandNames(), ", "))}
	}
	c := lookup(name)
	if c == nil {
		return exitOK, usageError{fmt.Errorf("unknown command %q", name)}
	}
	return c.run(ctx, b, args, stdin, stdout, stderr)
}

// ranTo is dispatch's result for a command with an exit code of its own (run, stress): the code
// when it ran to its end, or the error that stopped it.
func ranTo(code int, err error) (int, error) {
	if err != nil {
		return exitOK, err
	}
	return code, nil
}

// report prints err as one line and maps it to an exit code.
func report(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "leaselab: %s\n", words.Escape(err.Error())) // it may quote a file's or a database's text
	var ue usageError
	var pe *scenario.ParseError
	var se *engine.ScriptError
	switch {
	case errors.As(err, &ue), errors.As(err, &pe):
		if ue.err != nil && strings.HasPrefix(ue.Error(), "unknown command") {
			fmt.Fprint(stderr, mainUsage())
		}
		return exitUsage
	case errors.As(err, &se):
		// A script step that could not be carried out is the scenario's fault, unless the
		// database under it failed.
		var env *engine.EnvError
		if errors.As(err, &env) || errors.Is(err, engine.ErrBusy) {
			return exitEnvError
		}
		return exitUsage
	}
	return exitEnvError
}
