package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPlainInTmux builds leaselab, runs "leaselab --plain" in a real terminal (tmux, on a socket
// of its own), presses keys as a person would — space until a question, an answer, space to the
// verdict, q — and reads the pane: every line in order, starting at the left edge (raw mode's
// line endings are right), and no escape sequence anywhere in it.
func TestPlainInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds leaselab and runs it in tmux")
	}
	tmuxPath, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("no tmux")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "leaselab")
	build := exec.Command("go", "build", "-o", bin, "leaselab")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sock := fmt.Sprintf("plain-%d", os.Getpid())
	tmux := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, tmuxPath, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).Output()
		return string(out), err
	}
	t.Cleanup(func() { tmux("kill-server") })
	cmd := fmt.Sprintf("env TERM=xterm-256color %s --plain --scenario stale-owner --db %s", bin, filepath.Join(dir, "lab.db"))
	if _, err := tmux("new-session", "-d", "-s", "plain", "-x", "100", "-y", "50", cmd); err != nil {
		t.Fatalf("tmux: %v", err)
	}
	tmux("set-option", "-t", "plain", "remain-on-exit", "on")
	// pane is the whole pane, its scrollback too, wrapped lines joined; with -e, any style the
	// program drew would come back as an escape sequence.
	pane := func() string {
		out, _ := tmux("capture-pane", "-p", "-J", "-e", "-S", "-", "-t", "plain")
		return out
	}
	waitFor := func(what string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if p := pane(); strings.Contains(p, what) {
				return p
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("the pane never showed %q:\n%s", what, pane())
		return ""
	}
	waitFor("to quit.")
	answers := 0
	for i := 0; i < 40 && !strings.Contains(pane(), "VERDICT:"); i++ {
		before := pane()
		key := "n"
		if strings.Count(before, "Answer with") > answers {
			key, answers = "B", answers+1
		}
		tmux("send-keys", "-t", "plain", key)
		deadline := time.Now().Add(10 * time.Second)
		for pane() == before && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	tmux("send-keys", "-t", "plain", "q")
	p := waitFor("Leaving the lab.")
	if i := strings.IndexByte(p, 0x1b); i >= 0 {
		t.Fatalf("an escape sequence in the pane at byte %d: %q", i, p[max(0, i-40):min(len(p), i+40)])
	}
	for i := 0; i < len(p); i++ {
		if p[i] >= 0x80 {
			t.Fatalf("a byte beyond ASCII in the pane: %q", p[max(0, i-40):min(len(p), i+40)])
		}
	}
	// In order, each at the start of its line.
	p = "\n" + p
	at := 0
	for _, want := range []string{
		"Lesson stale-owner: STALE OWNER", "Press space/n to step",
		"Step 1:", "Step 2:", "09:00:00.000Z Worker-A claimed PAY-001, lease until 09:00:00.500Z.",
		"Row PAY-001: Status Processing (was Pending), LockedBy Worker-A (was none)",
		"Question: Worker-A is paused", "  B: reclaims it", "You answered B: reclaims it.",
		"Row PAY-001: Status Processing, LockedBy Worker-B (was Worker-A)", "Right: reclaims it.",
		"Question: Worker-A wakes and finalizes PAY-001", "You answered B: 0.",
		"Check holds: zero ownership violations", "VERDICT: PASS.", "Leaving the lab.",
	} {
		i := strings.Index(p[at:], "\n"+want)
		if i < 0 {
			t.Fatalf("%q is not at the start of a line after what came before it (byte %d):\n%s", want, at, p)
		}
		at += i + 1
	}
}
