// Command leaselab is a terminal lab in which competing workers fight over the rows of a real
// SQLite outbox, and headless runs that print the lesson's reports, checks and verdicts.
//
//	leaselab                     open the lab on the default scenario
//	leaselab run NAME|FILE       run a scenario headless; print and save its report
//	leaselab list                list the built-in scenarios
//
// Exit codes: 0 the scenario's expectations hold; 1 they do not; 2 usage or scenario errors;
// 3 environment errors (the database file or the report folder); 128+N ended by signal N
// (130 for Ctrl-C, SIGINT; 129 SIGHUP; 131 SIGQUIT; 143 SIGTERM; 141 SIGPIPE, its output
// closed), after removing its temporary folders.
//
// The command line is package leaselab/ui/cli; main wires it to the real databases and exits
// with its code.
package main

import (
	"os"

	"leaselab/store"
	"leaselab/store/postgres"
	"leaselab/ui/cli"
)

func main() {
	// The databases: SQLite files, and PostgreSQL schemas for a --db postgres:// URL.
	backends := cli.Backends{File: store.Files{}, Servers: map[string]cli.Servers{"postgres": postgres.Servers{}, "postgresql": postgres.Servers{}}}
	stdio := cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}
	// A stop signal cancels the command, whose cleanup runs; the code is then 128 + its number.
	os.Exit(cli.RunWithSignals(os.Args[1:], stdio, backends))
}
