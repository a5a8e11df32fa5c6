package cli

import (
	"context"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/share"
)

// codeIn finds the share code explore printed.
func codeIn(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^share code: ([0-9A-Z]+) \((\d+) characters`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no share code in:\n%s", out)
	}
	return m[1]
}

// TestShareCommand: share prints a code of the lesson and its flags; a file travels whole; what
// run would refuse is refused, exit 2.
func TestShareCommand(t *testing.T) {
	code, out, errs := cli(t, "share", "playground", "--atomic-claim=false", "--seed", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	c, err := share.Decode(strings.TrimSpace(out))
	if err != nil {
		t.Fatal(err)
	}
	if c.Lesson != "playground" || c.Overrides.Toggles[engine.ToggleAtomicClaim] || c.Overrides.Seed == nil || *c.Overrides.Seed != 4 || len(c.Moves) != 0 {
		t.Errorf("decoded %+v", c)
	}
	file := filepath.Join(t.TempDir(), "mine.scenario")
	if err := os.WriteFile(file, []byte("name: mine\nmessages: 2\nworkers: A B\nlease: 500ms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, out, _ = cli(t, "share", file)
	if c, err = share.Decode(strings.TrimSpace(out)); err != nil || !strings.HasPrefix(string(c.File), "name: mine") {
		t.Errorf("a file's code: %+v, %v", c, err)
	}
	for _, args := range [][]string{
		{"share", "no-such-lesson"},
		{"share", "playground", "--workers", "0"},
		{"share", "playground", "--db", "x.db"},
		{"share"},
	} {
		if code, _, errs := cli(t, args...); code != exitUsage || errs == "" {
			t.Errorf("%v: exit %d (%q), want 2 with a message", args, code, errs)
		}
	}
}

// TestExploreCodeRunsToTheBrokenCheck: explore prints a code for its counterexample, the
// playground's fits on a slide's line (64), and run --code replays the schedule to the same
// broken check (exit 1); --json carries it too.
func TestExploreCodeRunsToTheBrokenCheck(t *testing.T) {
	code, out, errs := cli(t, "explore", "playground", "--atomic-claim=false", "--progress", "0")
	if code != exitExpect {
		t.Fatalf("explore: exit %d: %s", code, errs)
	}
	c := codeIn(t, out)
	t.Logf("the playground's counterexample: %s (%d characters)", c, len(c))
	if len(c) > 64 {
		t.Errorf("the playground's code is %d characters, more than a slide's line (64)", len(c))
	}
	code, out, errs = cli(t, "run", "--code", c, "--report-dir", "")
	if code != exitExpect || !strings.Contains(out, "[FAIL] each message had one owner at a time") ||
		!strings.Contains(out, "THE SCHEDULE EXPLORE FOUND BREAKS ONE-OWNER") {
		t.Errorf("run --code: exit %d, want 1 and one-owner broken:\n%s%s", code, tail(out, 20), errs)
	}
	_, out, _ = cli(t, "explore", "playground", "--atomic-claim=false", "--progress", "0", "--json")
	var j struct {
		ShareCode string `json:"share_code"`
		Scenario  string `json:"scenario"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.ShareCode != c || j.Scenario == "" {
		t.Errorf("--json: %v, share_code %q (want %s), scenario %q", err, j.ShareCode, c, j.Scenario)
	}
	// A person's moment off the script (a crash by hand, the clock moved): run goes on from it to
	// the end; the expectations are not judged, and the exit code is the safety checks' verdict.
	moment, _ := share.Encode(share.Code{Lesson: "playground", Moves: []engine.Command{engine.CmdNext{}, engine.CmdCrash{Worker: 0},
		engine.CmdPastLease{}, engine.CmdNext{}}})
	code, out, errs = cli(t, "run", "--code", moment, "--report-dir", "")
	if code != exitOK || !strings.Contains(out, "Worker-A CRASHED holding PAY-001") || !strings.Contains(out, "Not judged: the run left the script") {
		t.Errorf("run --code of a lab moment: exit %d:\n%s%s", code, tail(out, 20), errs)
	}
	// A lesson file: its text travels in the code.
	file := filepath.Join(t.TempDir(), "aba.scenario")
	data, _, _ := readLesson("aba-fencing")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, out, _ = cli(t, "explore", file, "--fencing=false", "--progress", "0")
	code, out, errs = cli(t, "run", "--code", codeIn(t, out), "--report-dir", "")
	if code != exitExpect || !strings.Contains(out, "[FAIL] zero ownership violations") {
		t.Errorf("run --code of a file's counterexample: exit %d:\n%s%s", code, tail(out, 20), errs)
	}
}

// TestDamagedCodeIsRefused: a code with a character changed, cut short, of a newer version, or
// naming a lesson this leaselab does not have is refused by the lab and by run, exit 2, with
// what is wrong; so is --code beside a flag it carries.
func TestDamagedCodeIsRefused(t *testing.T) {
	good, err := share.Encode(share.Code{Lesson: "stale-owner", Moves: []engine.Command{engine.CmdNext{}, engine.CmdNext{}}})
	if err != nil {
		t.Fatal(err)
	}
	flip := "0"
	if good[12] == '0' {
		flip = "1"
	}
	enc := base32.NewEncoding("0123456789ABCDEFGHJKMNPQRSTVWXYZ").WithPadding(base32.NoPadding)
	raw, _ := enc.DecodeString(good)
	raw = raw[:len(raw)-4]
	raw[0] = raw[0]&1 | byte(share.Version+1)<<1
	newer := enc.EncodeToString(binary.BigEndian.AppendUint32(raw, crc32.ChecksumIEEE(raw)))
	unknown, _ := share.Encode(share.Code{Lesson: "no-such-lesson"})
	cases := []struct{ code, says string }{
		{good[:12] + flip + good[13:], "checksum does not match"},
		{good[:len(good)-5], "damaged share code"},
		{newer, "update leaselab"},
		{unknown, `the lesson "no-such-lesson", which this leaselab does not have`},
	}
	for _, c := range cases {
		for _, args := range [][]string{{"--code", c.code}, {"run", "--code", c.code, "--report-dir", ""}} {
			code, _, errs := cli(t, args...)
			if code != exitUsage || !strings.Contains(errs, c.says) {
				t.Errorf("%v: exit %d, %q; want 2 saying %q", args, code, errs, c.says)
			}
		}
	}
	for _, args := range [][]string{
		{"run", "--code", good, "--leasing=false", "--report-dir", ""},
		{"--code", good, "--scenario", "after"},
		{"run", "--code", good, "stale-owner"},
	} {
		if code, _, errs := cli(t, args...); code != exitUsage || errs == "" {
			t.Errorf("%v: exit %d (%q), want 2", args, code, errs)
		}
	}
	// A code whose moves the scenario cannot make (a worker it does not have): run says which.
	bad, _ := share.Encode(share.Code{Lesson: "playground", Moves: []engine.Command{engine.CmdNext{}, engine.CmdCrash{Worker: 8}}})
	if code, _, errs := cli(t, "run", "--code", bad, "--report-dir", ""); code != exitUsage || !strings.Contains(errs, "move 2 of 2") {
		t.Errorf("a code crashing worker 9 of 2: exit %d, %q", code, errs)
	}
	// A good code without a terminal: the lab says what it needs, as without a code.
	if code, _, errs := cli(t, "--code", good); code != exitUsage || !strings.Contains(errs, "needs a terminal") {
		t.Errorf("--code with no terminal: exit %d, %q", code, errs)
	}
}

// TestLabShareNote: the lab's S words, from the code it was opened with (a counterexample keeps
// its schedule) or from the scenario and its flags; a code too long for the status line is
// written to a file, whole.
func TestLabShareNote(t *testing.T) {
	_, out, _ := cli(t, "explore", "playground", "--atomic-claim=false", "--progress", "0")
	dir := t.TempDir()
	m, err := openCode(codeIn(t, out), func() (string, error) { return dir, nil })
	if err != nil {
		t.Fatal(err)
	}
	var entries []engine.Entry
	for range 3 {
		entries = append(entries, engine.Entry{Command: engine.CmdNext{}, Exact: true})
	}
	note, err := shareNote(m, m.scenario, engine.Overrides{}, entries, dir, testNow)
	if err != nil {
		t.Fatal(err)
	}
	c := strings.Fields(strings.SplitN(note, ": ", 2)[1])[0]
	got, err := share.Decode(c)
	if err != nil || got.Found == nil || len(got.Moves) != 3 || got.Lesson != "playground" {
		t.Errorf("S of a counterexample's third step: %q → %+v, %v", note, got, err)
	}
	entries = append(entries, engine.Entry{Command: engine.CmdFree{}}, engine.Entry{Command: engine.CmdNext{}, Exact: true})
	note, _ = shareNote(nil, "playground", engine.Overrides{}, entries, dir, testNow)
	if !strings.Contains(note, "step 3, the last before the workers ran free") {
		t.Errorf("S after a free run: %q", note)
	}
	file := filepath.Join(dir, "big.scenario")
	data, _, _ := readLesson("retry-backoff")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	note, err = shareNote(nil, file, engine.Overrides{}, nil, dir, testNow)
	if err != nil || !strings.Contains(note, "written whole to") {
		t.Fatalf("a file's code: %q, %v", note, err)
	}
	path := note[strings.Index(note, "written whole to ")+len("written whole to "):]
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := share.Decode(strings.TrimSpace(string(text))); err != nil || string(got.File) != string(data) {
		t.Errorf("the written code: %v", err)
	}
}

// readLesson is a built-in lesson's text.
func readLesson(name string) ([]byte, string, bool) { return assets.Scenario(name) }

// testNow is the wall clock of the notes' file names.
var testNow = time.Date(2026, time.December, 3, 19, 0, 0, 0, time.UTC)

// TestExploreKeyCodes: S on a violation the lab's explore key found gives the counterexample's
// code (the lesson, the toggle the lab had off, the schedule), as short as explore's, not the
// text of the file the lab opened.
func TestExploreKeyCodes(t *testing.T) {
	b := backends()
	root := newLabRoot(b, nil, nil)
	defer root.Close()
	dir := &lazyDir{}
	defer dir.remove()
	toggles := map[string]bool{}
	for _, tg := range engine.Registry() { // as the lab passes them: every toggle
		toggles[tg.Name] = tg.Default
	}
	toggles[engine.ToggleAtomicClaim] = false
	out, err := labExplore(b, root, dir)(context.Background(), "playground", toggles, func(string) {})
	if err != nil || out.File == "" {
		t.Fatalf("%+v, %v", out, err)
	}
	var entries []engine.Entry
	for range 6 {
		entries = append(entries, engine.Entry{Command: engine.CmdNext{}, Exact: true})
	}
	note, err := labShare(root, nil, t.TempDir())(out.File, entries)
	if err != nil {
		t.Fatal(err)
	}
	code := strings.Fields(strings.SplitN(note, ": ", 2)[1])[0]
	c, err := share.Decode(code)
	if err != nil {
		t.Fatalf("%q: %v", note, err)
	}
	if c.Lesson != "playground" || c.Found == nil || len(c.Moves) != 6 || len(c.Overrides.Toggles) != 1 || c.Overrides.Toggles[engine.ToggleAtomicClaim] {
		t.Errorf("S on the explore key's violation: %+v", c)
	}
	if len(code) > 64 {
		t.Errorf("%d characters: %s", len(code), code)
	}
}
