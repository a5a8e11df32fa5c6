package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileTranscript: --transcript never overwrites a file, names a missing folder before
// the run, and cannot be combined with --compare.
func TestHostileTranscript(t *testing.T) {
	existing := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "notes.md")
		if err := os.WriteFile(p, []byte("my own notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := func(t *testing.T, dir string) string { return filepath.Join(dir, "no-such-folder", "t.md") }
	none := func(t *testing.T, dir string) string { return filepath.Join(dir, "t.md") }
	runHostile(t, "transcript", []hostileCase{
		{name: "run --transcript FILE that exists", setup: at(existing, "run", "after", "--transcript", "FILE", "--report-dir", ""),
			code: exitUsage, msg: "the file exists; it is never overwritten", unchanged: true},
		{name: "run --transcript in a folder that does not exist", setup: at(missing, "run", "after", "--transcript", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "does not exist or is not a folder"},
		{name: "run --compare --transcript", setup: at(none, "run", "after", "--compare", "--transcript", "FILE", "--report-dir", ""),
			code: exitUsage, msg: "--compare prints one table"},
	})
}

// TestRunSQLAndTranscript: --sql prints each action's statements under its timeline line, and
// --transcript writes the handout (0600) with the recovery demo's four moments.
func TestRunSQLAndTranscript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "after.md")
	code, out, errOut := cli(t, "run", "stale-owner", "--sql", "--report-dir", "")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	i := strings.Index(out, "Worker-A finalize of PAY-001 REJECTED")
	if i < 0 {
		t.Fatalf("no rejected finalize:\n%s", out)
	}
	containsAll(t, "the --sql report after the rejected finalize", out[i:], "sql: BEGIN IMMEDIATE  → write lock taken at once",
		"AND LockedBy = 'Worker-A' RETURNING LeaseVersion  → 0 rows", "sql: → ROLLBACK (the payment update is undone too)")
	if code, out, errOut = cli(t, "run", "after", "--transcript", path, "--report-dir", ""); code != exitOK ||
		!strings.Contains(out, "Transcript saved: "+path) {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if strings.Contains(out, "sql: ") {
		t.Error("the report shows SQL without --sql")
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("transcript %v %v", st, err)
	}
	data, _ := os.ReadFile(path)
	containsAll(t, "the transcript", string(data), "1. **Claim** (step", "2. **Crash** (step", "3. **Blocked before expiry** (step", "4. **Reclaimed after expiry** (step")
}
