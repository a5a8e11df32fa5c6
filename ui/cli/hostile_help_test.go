package cli

import (
	"strings"
	"testing"
)

// Every command of the one table (commands.go) is listed by "leaselab help", named by the error
// of "leaselab help nope", and explained by "leaselab help COMMAND" and "COMMAND --help". The
// error's list was written out by hand and left out serve and redrive.
func TestHelpNamesEveryCommand(t *testing.T) {
	_, usage, _ := cli(t, "help")
	code, _, nope := cli(t, "help", "nope")
	if code != exitUsage {
		t.Errorf("help nope: exit %d, want %d", code, exitUsage)
	}
	for _, c := range commands {
		if !strings.Contains(usage, "leaselab "+c.synopsis) {
			t.Errorf("leaselab help does not list %q", "leaselab "+c.synopsis)
		}
		if !strings.Contains(nope, c.name+",") && !strings.Contains(nope, c.name+")") {
			t.Errorf("help nope does not name %s: %q", c.name, nope)
		}
		for _, args := range [][]string{{"help", c.name}, {c.name, "--help"}} {
			code, out, stderr := cli(t, args...)
			if code != exitOK || !strings.Contains(stderr+out, "Usage: leaselab") {
				t.Errorf("%v: exit %d, %q", args, code, stderr+out)
			}
		}
	}
	runHostile(t, "usage", []hostileCase{
		{name: "help nope", setup: args("help", "nope"), code: exitUsage,
			msg: `help nope: want "leaselab help" or "leaselab help COMMAND" (lab, run, list, stress, seed, worker, watch, serve, redrive, explore, share)`},
	})
}
