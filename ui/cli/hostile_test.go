package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// hostileCase is one hostile input or fault tried against the CLI: what is run, the exit code and
// the first words of the message that must come back, and whether the file it names must be left
// byte for byte as it was.
type hostileCase struct {
	// name is what is tried, as docs/reliability.md names it.
	name string
	// setup prepares dir and returns the command line, and the file whose bytes must not change
	// ("" when there is none to watch).
	setup func(t *testing.T, dir string) (args []string, file string)
	code  int
	// msg must occur in what the command printed (stderr, then stdout).
	msg string
	// unchanged: the file's sha256 (and those of its -wal and -shm) must be the same after.
	unchanged bool
}

// runHostile runs each case as a subtest of the group. When LEASELAB_RELIABILITY names a file,
// each case that passed appends one row of docs/reliability.md's table to it.
func runHostile(t *testing.T, group string, cases []hostileCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args, file := c.setup(t, dir)
			before := fileHashes(t, file)
			code, out, errOut := cli(t, args...)
			printed := errOut + out
			if code != c.code {
				t.Errorf("%v: exit %d, want %d\nstderr: %s\nstdout: %.2000s", args, code, c.code, errOut, out)
			}
			if !strings.Contains(printed, c.msg) {
				t.Errorf("%v: output lacks %q\nstderr: %s\nstdout: %.2000s", args, c.msg, errOut, out)
			}
			same := "—"
			if c.unchanged {
				after := fileHashes(t, file)
				if after != before {
					t.Errorf("%s changed: before %s, after %s", file, before, after)
				}
				same = hashCell(before, after)
			}
			if !t.Failed() {
				recordReliability(t, group, c.name, code, firstLine(printed), same)
			}
		})
	}
}

// args is a setup for a command line that names no file of its own.
func args(a ...string) func(t *testing.T, dir string) ([]string, string) {
	return func(t *testing.T, dir string) ([]string, string) { return a, "" }
}

// inDir is a setup for a command line that names paths in the case's folder, DIR in a, and no
// file whose bytes must not change.
func inDir(a ...string) func(t *testing.T, dir string) ([]string, string) {
	return func(t *testing.T, dir string) ([]string, string) {
		out := make([]string, len(a))
		for i, s := range a {
			out[i] = strings.ReplaceAll(s, "DIR", dir)
		}
		return out, ""
	}
}

// fileHashes is the sha256 of file and of its -wal and -shm, and says which of them exist. For
// a PostgreSQL URL it is that of the schema's comment, objects and rows (pgSchemaState).
func fileHashes(t *testing.T, file string) string {
	t.Helper()
	if file == "" {
		return ""
	}
	if strings.HasPrefix(file, "postgres://") {
		u, err := url.Parse(file)
		if err != nil {
			t.Fatal(err)
		}
		return pgSchemaState(t, u.Query().Get("schema"))
	}
	var parts []string
	for _, p := range []string{file, file + "-wal", file + "-shm", file + "-journal"} {
		data, err := os.ReadFile(p)
		switch {
		case os.IsNotExist(err):
			parts = append(parts, "absent")
		case err != nil:
			parts = append(parts, "unreadable: "+err.Error())
		default:
			sum := sha256.Sum256(data)
			parts = append(parts, hex.EncodeToString(sum[:8]))
		}
	}
	return strings.Join(parts, " ")
}

// hashCell is what docs/reliability.md's last column says of a file hashed before and after
// (fileHashes): the first 12 hex digits of each sha256, before → after, of the file and of each
// -wal, -shm or -journal that existed either time, and whether they are the same:
// "sha256 3f2a9c1b0d4e→3f2a9c1b0d4e unchanged". A PostgreSQL schema has one hash, of its state.
func hashCell(before, after string) string {
	short := func(h string) string {
		if len(h) > 12 && !strings.HasPrefix(h, "unreadable") {
			return h[:12]
		}
		return h
	}
	b, a := strings.Fields(before), strings.Fields(after)
	var parts []string
	if len(b) == 4 && len(a) == 4 {
		for i, suffix := range []string{"", "-wal ", "-shm ", "-journal "} {
			if b[i] == "absent" && a[i] == "absent" {
				continue
			}
			parts = append(parts, suffix+short(b[i])+"→"+short(a[i]))
		}
	} else {
		parts = []string{short(before) + "→" + short(after)}
	}
	verdict := "unchanged"
	if before != after {
		verdict = "CHANGED"
	}
	if len(parts) == 0 {
		return "no file before or after, nor -wal, -shm, -journal: nothing made"
	}
	return "sha256 " + strings.Join(parts, ", ") + " " + verdict
}

var reliabilityMu sync.Mutex

// tempPath is the test's temporary folder in a message, left out of the table: the file's
// name says enough.
var tempPath = regexp.MustCompile(regexp.QuoteMeta(os.TempDir()) + `/[^/ ]+/[0-9]+/`)

// testSchemaURL is the test server's URL with a schema in a message, and testSchema the pid
// suffix of a test's schema (pgSchemaURL): both are left out of the table, as temporary folders are.
var (
	testSchemaURL = regexp.MustCompile(`postgres://[^ @]*@127\.0\.0\.1:[0-9]+/postgres\?[^ ]*?schema=leaselab_test_[a-z0-9_]*(&[a-z_]+=[a-z0-9]+)*`)
	testSchema    = regexp.MustCompile(`(leaselab_test_[a-z_]+?)_[0-9]+\b`)
)

// recordReliability appends one row to the file LEASELAB_RELIABILITY names, if any: the group,
// the input, the exit code, the message and what became of the file. A relative name is taken
// from the repository's root, as when these tests were its own.
func recordReliability(t *testing.T, group, input string, code int, msg, file string) {
	path := os.Getenv("LEASELAB_RELIABILITY")
	if path == "" {
		return
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", "..", path)
	}
	cell := func(s string) string {
		s = tempPath.ReplaceAllString(s, "")
		s = testSchemaURL.ReplaceAllString(s, "URL")
		s = testSchema.ReplaceAllString(s, "$1")
		s = strings.ReplaceAll(s, "|", `\|`)
		if len(s) > 160 {
			s = s[:157] + "…"
		}
		return s
	}
	reliabilityMu.Lock()
	defer reliabilityMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("LEASELAB_RELIABILITY: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "| %s | %s | %d | `%s` | %s |\n", cell(group), cell(input), code, cell(msg), file)
}
