package cli

import (
	"fmt"
	"io"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
)

func cmdList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", "Usage: leaselab list\n\nLists the built-in scenarios with their titles.\n", stderr)
	if err := fs.Parse(args); err != nil {
		return usageFlag(err)
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("list takes no arguments, got %q", fs.Arg(0))}
	}
	for _, n := range assets.Names() {
		data, src, _ := assets.Scenario(n)
		title := ""
		if sc, err := scenario.Parse(src, data); err == nil {
			title = sc.Title
			if sc.Backend == engine.BackendPostgres {
				title += " (PostgreSQL only: --db postgres://…)"
			}
		}
		fmt.Fprintf(stdout, "%-16s %s\n", n, title)
	}
	return nil
}
