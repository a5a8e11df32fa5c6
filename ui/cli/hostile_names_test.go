package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// An SSH user name is the client's to choose: a bidi override (U+202E) or a line feed in it
// must reach neither the teacher's table nor the log raw, where the one reorders what the
// teacher reads and the other splits a log line and forges the next. Today both pass through.
func TestNetworkNamesAreEscaped(t *testing.T) {
	teacher := newSigner(t)
	file := filepath.Join(t.TempDir(), "teacher.pub")
	if err := os.WriteFile(file, gossh.MarshalAuthorizedKey(teacher.PublicKey()), 0o644); err != nil {
		t.Fatal(err)
	}
	keys, err := readAuthorizedKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, serveOptions{maxSessions: 4, teachers: keys})
	const name = "mal\u202eexe.txt\n2026/12/01 09:00:00 forged: teacher logged in"
	a := ts.connect(t, dialOpts{user: name})
	a.waitFor("PAY-006")
	tt := ts.connect(t, dialOpts{user: "teacher", key: teacher})
	tt.waitFor("the teacher's table: 1 of 4 labs open")
	tt.waitFor(`mal\u202eexe`)
	if strings.Contains(tt.out.String(), "\u202e") {
		t.Errorf("the teacher's table shows a raw U+202E")
	}
	a.hangUp()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(ts.log.String(), "closed, database removed") {
		if time.Now().After(deadline) {
			t.Fatalf("no line for the closed lab in the log:\n%s", ts.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	log := ts.log.String()
	for _, l := range strings.Split(log, "\n") {
		if strings.HasPrefix(l, "2026/12/01 09:00:00 forged") {
			t.Errorf("a forged log line: %q", l)
		}
	}
	if strings.Contains(log, "\u202e") || !strings.Contains(log, `mal\u202eexe.txt\x0a2026/12/01 09:00:00 forged`) {
		t.Errorf("the log shows the name raw, or not as words.Escape writes it:\n%s", log)
	}
	if !t.Failed() {
		recordReliability(t, "serve", "an SSH user name with U+202E and a line feed (forged log line)", exitOK,
			`mal\u202eexe.txt\x0a2026/12/01 09:00:00 forged: … (one log line; the same in the teacher's table)`, "—")
	}
}
