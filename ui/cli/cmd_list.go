package cli

import (
	"fmt"
	"io"
	"slices"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
)

const listUsage = `Usage: leaselab list [--json]

Lists the built-in scenarios with their titles: the lessons, then the incidents (real queue
bugs, each with its fix one toggle away). --json lists each with its incident card and the
name of its fix toggle.
`

// listed is one scenario of list --json.
type listed struct {
	Name      string           `json:"name"`
	Title     string           `json:"title"`
	Backend   string           `json:"backend,omitempty"`
	Incident  *engine.Incident `json:"incident"`
	FixToggle string           `json:"fix_toggle"`
}

func cmdList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", listUsage, stderr)
	asJSON := fs.Bool("json", false, "list each scenario with its incident card and fix toggle, as JSON")
	if err := fs.Parse(args); err != nil {
		return usageFlag(err)
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("list takes no arguments, got %q", fs.Arg(0))}
	}
	var all []listed
	for _, n := range assets.Names() {
		data, src, _ := assets.Scenario(n)
		l := listed{Name: n}
		if sc, err := scenario.Parse(src, data); err == nil {
			l.Title, l.Backend, l.Incident = sc.Title, sc.Backend, sc.Incident
			if sc.Incident != nil {
				l.FixToggle = sc.Incident.FixToggle
			}
		}
		all = append(all, l)
	}
	if *asJSON {
		return writeJSON(stdout, all)
	}
	heading, width := false, 16
	for _, l := range all {
		if !heading && slices.Contains(assets.Museum(), l.Name) {
			fmt.Fprintln(stdout, "\nIncidents: real queue bugs replayed, each fix one toggle away (leaselab run NAME --FIX)")
			heading = true
			for _, n := range assets.Museum() {
				width = max(width, len(n))
			}
		}
		title := l.Title
		if l.Backend == engine.BackendPostgres {
			title += " (PostgreSQL only: --db postgres://…)"
		}
		if l.Incident != nil {
			title += " [fix: --" + l.FixToggle + "]"
		}
		fmt.Fprintf(stdout, "%-*s %s\n", width, l.Name, title)
	}
	return nil
}
