package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cliIn runs leaselab with args and stdin in, and returns its exit code, stdout and stderr.
func cliIn(t *testing.T, in string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, Stdio{In: strings.NewReader(in), Out: &out, Err: &errb}, backends())
	return code, out.String(), errb.String()
}

// --plain takes the lab's flags (a scenario, a --db file, a toggle) and reads keys from a pipe;
// LEASELAB_PLAIN=1 is the same.
func TestPlainTakesTheLabsFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "lab.db")
	code, out, errs := cliIn(t, "n\nn\nq\n", "--plain", "--scenario", "before", "--db", db, "--leasing=true")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	for _, want := range []string{"Lesson before:", "Settings: leasing on (this lesson's)", "Step 2:", "claimed PAY-001", "Leaving the lab."} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	t.Setenv("LEASELAB_PLAIN", "1")
	code, out, errs = cliIn(t, "n\n", "--scenario", "stale-owner", "--db", db, "--reset")
	if code != exitOK || !strings.Contains(out, "Lesson stale-owner:") || !strings.Contains(out, "End of input") {
		t.Fatalf("LEASELAB_PLAIN=1: exit %d, stdout %s, stderr %s", code, out, errs)
	}
	// --plain=false wins over the environment: the lab itself, which needs a terminal.
	code, _, errs = cliIn(t, "", "--plain=false")
	if code != exitUsage || !strings.Contains(errs, "the lab needs a terminal") {
		t.Fatalf("--plain=false with LEASELAB_PLAIN=1: exit %d, stderr %s", code, errs)
	}
}

// What does not go together is refused before anything opens, exit 2, naming the flag.
func TestPlainRefusesWhatDoesNotFit(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"--plain", "--theme", "projector"}, "--theme projector with --plain"},
		{"1", []string{"--theme", "projector"}, "--theme projector with LEASELAB_PLAIN=1"},
		{"", []string{"--theme", "beamer"}, `--theme "beamer": unknown theme: choose one of default, projector`},
		{"yes please", nil, `LEASELAB_PLAIN="yes please": want 1 (plain mode) or 0`},
		{"", []string{"--plain", "--messages", "100000"}, "more than the 5000 a session may hold"},
		{"", []string{"--plain", "--scenario", "no-such-lesson"}, "no-such-lesson"},
		{"", []string{"--plain", "--code", "08A70V31F5KQ4VVNDSJ02202000G21G00C0G6004002G21010M0GAV13P4JG", "--workers", "3"}, "--workers"},
		{"", []string{"--plain", "--code", "NOT-A-CODE"}, "--code"},
	} {
		t.Run(strings.Join(tc.args, " ")+tc.env, func(t *testing.T) {
			t.Setenv("LEASELAB_PLAIN", tc.env)
			code, out, errs := cliIn(t, "q\n", tc.args...)
			if code != exitUsage || !strings.Contains(errs, tc.want) || out != "" {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q (want %q)", code, exitUsage, out, errs, tc.want)
			}
		})
	}
}

// exploreCode is the share code "leaselab explore playground --atomic-claim=false" prints: the
// six moves by which two workers both process PAY-001.
const exploreCode = "08A70V31F5KQ4VVNDSJ02202000G21G00C0G6004002G21010M0GAV13P4JG"

// --plain --code opens the code's scenario with its settings and makes its moves again: plain
// mode says so, then the rows at the counterexample's end and the check it breaks; b steps back
// through the moves. LEASELAB_PLAIN=1 is the same.
func TestPlainOpensAShareCode(t *testing.T) {
	for _, env := range []string{"", "1"} {
		t.Setenv("LEASELAB_PLAIN", env)
		args := []string{"--code", exploreCode}
		if env == "" {
			args = append([]string{"--plain"}, args...)
		}
		code, out, errs := cliIn(t, "b\nq\n", args...)
		if code != exitOK {
			t.Fatalf("LEASELAB_PLAIN=%q: exit %d, stderr %s", env, code, errs)
		}
		for _, want := range []string{
			"Opened from a share code: its 6 moves made again",
			"atomic-claim off",
			"Step 6:",
			"PAY-001: Status Processing, LockedBy Worker-B",
			"processed by Worker-A, then Worker-B",
			"Check FAILS: each message had one owner at a time: 1 by two owners at once.",
			"VERDICT: FAIL",
			"Back at step 5 of 6",
			"Leaving the lab.",
		} {
			if !strings.Contains(out, want) {
				t.Fatalf("LEASELAB_PLAIN=%q: no %q in:\n%s", env, want, out)
			}
		}
	}
}

// watch takes the lab's --theme, and refuses an unknown one the same way before it opens
// anything: exit 2, naming the flag, no database file made.
func TestWatchThemeRefusedWhenUnknown(t *testing.T) {
	db := filepath.Join(t.TempDir(), "shared.db")
	code, out, errs := cliIn(t, "", "watch", "--db", db, "--theme", "beamer")
	want := `--theme "beamer": unknown theme: choose one of default, projector`
	if code != exitUsage || !strings.Contains(errs, want) || out != "" {
		t.Fatalf("exit %d (want %d), stdout %q, stderr %q (want %q)", code, exitUsage, out, errs, want)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("%s: %v, want no file made", db, err)
	}
	// A known theme gets past the flags to the database's own check.
	code, _, errs = cliIn(t, "", "watch", "--db", db, "--theme", "projector")
	if code == 0 || strings.Contains(errs, "--theme") {
		t.Fatalf("--theme projector: exit %d, stderr %q", code, errs)
	}
}
