package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// TestServeTeacher: the teacher's key gets the table, not a lab, and is not counted against
// --max-sessions; the table follows the labs; an offer reaches every lab and opens only where
// the attendee presses O.
func TestServeTeacher(t *testing.T) {
	teacher := newSigner(t)
	keys := teacherKeys(t, append([]byte("# the teacher\n"), gossh.MarshalAuthorizedKey(teacher.PublicKey())...))
	ts := startServer(t, serveOptions{maxSessions: 2, teachers: keys})
	ana := ts.connect(t, dialOpts{user: "ana", key: newSigner(t)}) // her own key: an attendee
	ben := ts.connect(t, dialOpts{user: "ben"})                    // no key at all
	ana.waitFor("PAY-006")
	ben.waitFor("PAY-006")
	ana.press(" ")
	ana.waitFor("Worker-A claimed PAY-001")

	tt := ts.connect(t, dialOpts{user: "teach\x1b[31m", key: teacher})
	tt.waitFor("the teacher's table: 2 of 2 labs open")
	tt.waitFor("ana")
	tt.waitFor("ben")
	tt.waitFor("LAO··") // the playground's toggles
	if strings.Contains(tt.out.String(), "PAY-006") {
		t.Fatal("the teacher got a lab")
	}
	if n := len(ts.srv.Sessions()); n != 2 {
		t.Fatalf("%d labs listed, want 2 (the teacher's table is none)", n)
	}
	tt.press("\t", "\t")
	tt.waitFor("offer: after")
	tt.press("s")
	tt.waitFor("offered after to 2 labs")
	ana.waitFor("the teacher offers the scenario after: press O")
	ben.waitFor("the teacher offers the scenario after: press O")
	ana.press("O")
	ana.waitFor("opened after")
	ben.press(" ")
	ben.waitFor("Worker-A claimed PAY-001") // ben keeps his run
	var got map[string]string
	if !poll(10*time.Second, 50*time.Millisecond, func() bool {
		got = map[string]string{}
		for _, in := range ts.srv.Sessions() {
			got[in.User] = in.Scenario + "/" + in.Status.Offer
		}
		return got["ana"] == "after/" && got["ben"] == "playground/after"
	}) {
		t.Fatalf("labs: %v, want ana on after, ben on playground with after offered", got)
	}
	tt.waitFor("offered after") // ben's row on the teacher's table
	tt.press("q")
	if code := tt.exit(); code != 0 {
		t.Errorf("teacher q: exit %d", code)
	}
	if strings.Contains(ts.log.String(), "\x1b[31m") {
		t.Error("the log printed a user name's escape sequence")
	}
}

// TestTeacherKeyFile: a file that is not an authorized_keys file fails with file:line.
func TestTeacherKeyFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pub")
	os.WriteFile(bad, []byte("# ok\nssh-ed25519 nonsense\n"), 0o644)
	empty := filepath.Join(dir, "empty.pub")
	os.WriteFile(empty, []byte("# nothing\n"), 0o644)
	runHostile(t, "serve --teacher-key", []hostileCase{
		{name: "a line that is not a key", setup: func(t *testing.T, d string) ([]string, string) {
			return []string{"serve", "--teacher-key", bad, "--host-key", filepath.Join(d, "k")}, bad
		}, code: exitUsage, msg: bad + ":2: not a public key", unchanged: true},
		{name: "no key in the file", setup: func(t *testing.T, d string) ([]string, string) {
			return []string{"serve", "--teacher-key", empty, "--host-key", filepath.Join(d, "k")}, empty
		}, code: exitUsage, msg: "no public key in it", unchanged: true},
		{name: "a missing file", setup: inDir("serve", "--teacher-key", "DIR/none.pub", "--host-key", "DIR/k"), code: exitEnvError, msg: "--teacher-key: stat"},
	})
}
