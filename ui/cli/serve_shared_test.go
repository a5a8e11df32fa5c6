package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"leaselab/ui/serve"
)

// The shared room (serve --shared) driven by real SSH clients (golang.org/x/crypto/ssh) over
// TCP, its rows checked in the room's database file.

// sharedServer is a test server of serve --shared with args (the listen address and host key
// are the test's own), whose teacher authenticates with teacher.
type sharedServer struct {
	*testServer
	room    *sharedRoom
	dbPath  string
	handout string // the transcripts' folder
}

func startShared(t testing.TB, teacher gossh.Signer, args ...string) *sharedServer {
	t.Helper()
	ts := &testServer{tmp: t.TempDir(), served: make(chan error, 1), log: &syncBuf{}}
	t.Setenv("TMPDIR", ts.tmp)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "teacher.pub")
	if err := os.WriteFile(keyFile, gossh.MarshalAuthorizedKey(teacher.PublicKey()), 0o644); err != nil {
		t.Fatal(err)
	}
	handouts := filepath.Join(dir, "handouts")
	os.Mkdir(handouts, 0o755)
	o, err := parseServe(append([]string{"--teacher-key", keyFile, "--handouts", handouts}, args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.teachers, err = readAuthorizedKeys(keyFile); err != nil {
		t.Fatal(err)
	}
	key, _, err := serve.HostKey(filepath.Join(dir, "host_key"))
	if err != nil {
		t.Fatal(err)
	}
	ts.hostPK = key.PublicKey()
	sr, err := openSharedRoom(context.Background(), backends(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sr.cleanup) // after the server's shutdown, registered below
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	cfg, err := sharedServerConfig(sr, key, o, connectLine(ln.Addr()), ts.log)
	if err == nil {
		ts.srv, err = serve.New(cfg)
	}
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ts.serve(t, ln)
	return &sharedServer{testServer: ts, room: sr, dbPath: sr.dbPath, handout: handouts}
}

// row is the outbox row of key in the room's database: "Status|LockedBy|LeaseVersion".
func (s *sharedServer) row(t *testing.T, key string) string {
	t.Helper()
	var status, by string
	var v int64
	if err := rawQueryRow(s.dbPath, "SELECT Status, coalesce(LockedBy, ''), LeaseVersion FROM OutboxMessages WHERE IdempotencyKey = '"+key+"'", &status, &by, &v); err != nil {
		t.Fatalf("row %s: %v", key, err)
	}
	return fmt.Sprintf("%s|%s|%d", status, by, v)
}

// wantRow waits up to 5 s for key's row to be want.
func (s *sharedServer) wantRow(t *testing.T, key, want string) {
	t.Helper()
	got := ""
	if !poll(5*time.Second, 20*time.Millisecond, func() bool { got = s.row(t, key); return got == want }) {
		t.Fatalf("%s is %s in the room's database, want %s", key, got, want)
	}
}

// TestServeShared walks the room: three attendees and a teacher on --shared playground.
// Each attendee's key claims and finalizes a message under their own name in the database; one
// attendee's connection is cut while they hold a lease, their row stays Processing under their
// name until the teacher moves the clock, then another attendee reclaims it (lease version 2)
// and the reconnected attendee's old finalize is refused; leasing off for the room has two
// attendees process the same row, counted as a duplicate; the teacher asks a question, writes
// the transcript and ends the round.
func TestServeShared(t *testing.T) {
	teacherKey := newSigner(t)
	s := startShared(t, teacherKey, "--shared", "playground", "--max-sessions", "3")
	ana := s.connect(t, dialOpts{user: "ana"})
	ben := s.connect(t, dialOpts{user: "ben", key: newSigner(t)})
	carl := s.connect(t, dialOpts{user: "carl"})
	teacher := s.connect(t, dialOpts{user: "teacher", key: teacherKey})
	teacher.waitFor("the teacher")
	for i, a := range []*attendee{ana, ben, carl} {
		a.waitFor("PAY-006")
		a.press(" ")
		a.waitFor("your actions: 1")
		name := []string{"ana", "ben", "carl"}[i]
		a.waitFor(fmt.Sprintf("%s claimed PAY-00%d", name, i+1))
		s.wantRow(t, fmt.Sprintf("PAY-00%d", i+1), "Processing|"+name+"|1")
	}
	for i, a := range []*attendee{ben, carl} {
		a.press(" ")
		a.waitFor("your actions: 2")
		a.press(" ")
		a.waitFor("your actions: 3")
		s.wantRow(t, fmt.Sprintf("PAY-00%d", i+2), "Processed|"+[]string{"ben", "carl"}[i]+"|1")
	}
	ana.press(" ") // her provider call
	ana.waitFor("your actions: 2")
	ana.hangUp() // the laptop closes while she holds PAY-001
	teacher.waitFor("AWAY (connection dropped)")
	s.wantRow(t, "PAY-001", "Processing|ana|1")
	ben.press(" ") // his claim takes the next free row, not ana's under its live lease
	ben.waitFor("ben claimed PAY-004")
	s.wantRow(t, "PAY-001", "Processing|ana|1")
	teacher.press("f")
	teacher.waitFor("clock moved 09:00:00.000Z → 09:00:00.501Z")
	carl.press(" ")
	carl.waitFor("carl reclaimed PAY-001 from ana")
	s.wantRow(t, "PAY-001", "Processing|carl|2")
	carl.press(" ")
	carl.waitFor("your actions: 5")

	ana2 := s.connect(t, dialOpts{user: "ana"})
	ana2.waitFor("your old worker ana is")
	dave := s.connect(t, dialOpts{user: "dave"})
	dave.waitFor("sorry, the room is full: 3 attendees are connected")
	if code := dave.exit(); code != 1 {
		t.Errorf("a fourth attendee: exit %d, want 1", code)
	}
	nopty := s.connect(t, dialOpts{user: "erin", noPty: true})
	nopty.waitFor("leaselab needs a terminal: connect with  ssh -t -p ")
	if strings.Contains(nopty.out.String(), "[scenario]") {
		t.Error("the shared room asks for a scenario")
	}
	ana2.press("F")
	ana2.waitFor("REJECTED")
	s.wantRow(t, "PAY-001", "Processing|carl|2")
	teacher.waitFor("ana's stale finalize of PAY-001 (lease version 1) was refused by the ownership check: carl held it (lease version 2)")

	// Leasing off for the room: ben and ana both load the Pending rows and process PAY-005.
	teacher.press("l")
	teacher.waitFor("leasing switched off")
	ben.press(" ", " ", " ") // ben finishes PAY-004, then loads
	ben.waitFor("ben loaded")
	ben.press(" ")
	ben.waitFor("ben processed PAY-005")
	ana2.press(" ")
	ana2.waitFor("ana#2 loaded")
	ana2.press(" ")
	ana2.waitFor("ana#2 processed PAY-005")
	teacher.waitFor("PAY-005 was processed by ben and ana at once (leasing off)")
	teacher.waitFor("duplicates 1")

	// A question, answered by two; the histogram on the teacher's screen.
	teacher.press("Q", "t")
	for _, k := range []string{"Who processed PAY-005?", " | ", "ben | ana | both"} {
		teacher.press(k)
	}
	teacher.press("\r")
	ben.waitFor("QUESTION 1: Who processed PAY-005?")
	ben.press("3")
	ben.waitFor("your answer: both")
	carl.press("3")
	teacher.waitFor("2 answered")

	teacher.press("w")
	teacher.waitFor("the room's transcript is written: " + s.handout)
	files, _ := filepath.Glob(filepath.Join(s.handout, "leaselab-room-playground-*.md"))
	if len(files) != 1 {
		t.Fatalf("transcripts: %v", files)
	}
	md, _ := os.ReadFile(files[0])
	for _, want := range []string{"PAY-005 was processed by ben and ana at once (leasing off)", "| ana |", "# leaselab transcript: playground"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the transcript misses %q", want)
		}
	}
	teacher.press("e")
	carl.waitFor("SCOREBOARD: 6 messages, 7 provider calls: PAY-005 was processed by ben and ana at once (leasing off)")
	carl.press(" ")
	carl.waitFor("the teacher has paused the room")
	if strings.Contains(s.log.String(), "\x1b[") {
		t.Error("the log printed an escape sequence")
	}
}

// An attendee idle past the room's limit has crashed to the room: their row stays Processing
// under their name; their next key brings them back with a fresh worker, whose claim takes
// another row; the teacher's i changes the limit for the room.
func TestServeSharedIdle(t *testing.T) {
	teacherKey := newSigner(t)
	s := startShared(t, teacherKey, "--shared", "playground", "--idle-crash", "400ms")
	dan := s.connect(t, dialOpts{user: "dan"})
	dan.waitFor("PAY-006")
	dan.press(" ")
	dan.waitFor("dan claimed PAY-001")
	dan.waitFor("AWAY (idle past the room's limit)")
	s.wantRow(t, "PAY-001", "Processing|dan|1")
	teacher := s.connect(t, dialOpts{user: "teacher", key: teacherKey})
	teacher.waitFor("idle limit 400ms")
	teacher.press("i")
	teacher.waitFor("idle limit off")
	dan.press("x") // any key: back
	dan.waitFor("you are back with a fresh worker")
	dan.press(" ")
	dan.waitFor("dan#2 claimed PAY-002")
	s.wantRow(t, "PAY-002", "Processing|dan|1")
	s.wantRow(t, "PAY-001", "Processing|dan|1")
}

// TestHostileServeShared: the shared room's bad flags fail before it listens, with one line.
func TestHostileServeShared(t *testing.T) {
	teacher := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "teacher.pub")
		if err := os.WriteFile(p, gossh.MarshalAuthorizedKey(newSigner(t).PublicKey()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shared := func(a ...string) func(t *testing.T, dir string) ([]string, string) {
		return func(t *testing.T, dir string) ([]string, string) {
			return append([]string{"serve", "--host-key", filepath.Join(dir, "key"), "--listen", "127.0.0.1:0", "--teacher-key", teacher(t, dir)}, a...), ""
		}
	}
	runHostile(t, "serve --shared", []hostileCase{
		{name: "--messages without --shared", setup: inDir("serve", "--messages", "5", "--host-key", "DIR/key"),
			code: exitUsage, msg: "--messages: only with --shared SCENARIO"},
		{name: "--shared without --teacher-key", setup: inDir("serve", "--shared", "playground", "--host-key", "DIR/key"),
			code: exitUsage, msg: "--shared needs --teacher-key FILE"},
		{name: "--shared with an unknown scenario", setup: shared("--shared", "nosuch"), code: exitUsage, msg: "nosuch"},
		{name: "--shared --messages 6000", setup: shared("--shared", "playground", "--messages", "6000"),
			code: exitUsage, msg: "6000 messages, more than the 5000 a room holds"},
		{name: "--shared --idle-crash -1s", setup: shared("--shared", "playground", "--idle-crash", "-1s"),
			code: exitUsage, msg: "--idle-crash -1s: want a positive duration"},
		{name: "--shared --db a file that holds rows", setup: func(t *testing.T, dir string) ([]string, string) {
			db := filepath.Join(dir, "room.db")
			if code, _, errOut := cli(t, "seed", "--db", db, "--messages", "3"); code != 0 {
				t.Fatalf("seed: %d %s", code, errOut)
			}
			a, _ := shared("--shared", "playground", "--db", db)(t, dir)
			return a, db
		}, code: exitEnvError, msg: "holds 3 messages: pass --reset", unchanged: true},
	})
}
