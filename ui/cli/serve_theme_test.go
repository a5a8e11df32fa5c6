package cli

import (
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"leaselab/ui/common"
)

// serve's --theme is the lab's: parsed, and an unknown name refused naming the flag (exit 2).
func TestServeThemeFlag(t *testing.T) {
	o, err := parseServe([]string{"--theme", "projector"}, io.Discard)
	if err != nil || o.theme != common.ThemeProjector {
		t.Fatalf("--theme projector: theme %q, %v", o.theme, err)
	}
	_, err = parseServe([]string{"--theme", "beamer"}, io.Discard)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `--theme "beamer": unknown theme: choose one of default, projector`) {
		t.Fatalf("--theme beamer: %v, want a usage error naming the flag", err)
	}
}

// faint is the escape sequence of faint text, which a projector's beam loses.
var faint = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?2(?:;[0-9;]*)?m`)

// TestServeTeacherTableThemed: with --theme projector the teacher's table (what the projector
// shows) draws nothing faint; the default theme does, so the check can fail.
func TestServeTeacherTableThemed(t *testing.T) {
	for _, theme := range []string{common.ThemeDefault, common.ThemeProjector} {
		t.Run(theme, func(t *testing.T) {
			teacher := newSigner(t)
			keys := teacherKeys(t, gossh.MarshalAuthorizedKey(teacher.PublicKey()))
			ts := startServer(t, serveOptions{teachers: keys, theme: theme})
			tt := ts.connect(t, dialOpts{user: "teach", key: teacher, env: map[string]string{"TERM": "xterm-256color"}})
			tt.waitFor("no lab is open yet")
			got := faint.MatchString(tt.out.String())
			tt.press("q")
			tt.exit()
			if want := theme == common.ThemeDefault; got != want {
				t.Fatalf("theme %s: faint text drawn %v, want %v", theme, got, want)
			}
		})
	}
}
