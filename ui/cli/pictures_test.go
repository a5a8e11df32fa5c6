package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/ui/diagram"
)

// readShape reads the Shape of the SVG at path, or fails.
func readShape(t *testing.T, path string) diagram.Shape {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := diagram.ReadSVGShape(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// TestRunDiagramIsTheLabsDiagram runs after as run --diagram --cast does (the lab steps the
// session), writes its picture with run's writer from the run's report, and requires the SVG
// to show what the lab's own diagram (t) holds at the end of that same run: the lanes, every
// column and its event, the leases and the marks.
func TestRunDiagramIsTheLabsDiagram(t *testing.T) {
	for _, name := range []string{"after", "stale-owner"} {
		t.Run(name, func(t *testing.T) {
			b := backends()
			var sf scenarioFlags
			fs := newFlagSet("run", "", &bytes.Buffer{})
			sf.register(fs, nil)
			sc, err := loadScenario(b, name, &sf, fs)
			if err != nil {
				t.Fatal(err)
			}
			var rec *labRecording
			run, err := runScenarioMoves(context.Background(), sc, sf.dbs(b, false), false, false, nil,
				func(ctx context.Context, sess *engine.Session) (err error) {
					rec, err = recordLab(ctx, sess, lessonsFor(b, ""), 120, 40)
					return err
				})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "d.svg")
			if err := writeDiagram("--diagram", path, run.report); err != nil {
				t.Fatal(err)
			}
			got, lab := readShape(t, path), diagram.ShapeOf(rec.diagram)
			if len(lab.Lanes) != 2 || len(lab.Events) < 10 || len(lab.Leases) < 2 {
				t.Fatalf("the lab's diagram holds too little to compare: %+v", lab)
			}
			if d := lab.Differences(got); d != "" {
				t.Error(d)
			}
		})
	}
}

// TestRunDiagramFile: run after --diagram writes a new, well-formed SVG 1.1 file with a lane per
// worker, says where, and with --transcript the picture beside the Markdown, which links it.
func TestRunDiagramFile(t *testing.T) {
	dir := t.TempDir()
	svg, md := filepath.Join(dir, "d.svg"), filepath.Join(dir, "after.md")
	code, out, errOut := cli(t, "run", "after", "--diagram", svg, "--transcript", md, "--report-dir", "")
	if code != exitOK || !strings.Contains(out, "Diagram saved: "+svg) {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	s := readShape(t, svg)
	if strings.Join(s.Lanes, " ") != "Worker-A Worker-B" || len(s.Events) < 20 || len(s.Marks) < 20 {
		t.Fatalf("the picture of after: %+v", s)
	}
	beside := readShape(t, filepath.Join(dir, "after.svg"))
	if strings.Join(beside.Lanes, " ") != "Worker-A Worker-B" || len(beside.Events) < 20 {
		t.Fatalf("the transcript's picture: %+v", beside)
	}
	data, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "](after.svg)") {
		t.Error("the transcript does not link its picture after.svg")
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestHostilePictures: --diagram and --cast never overwrite a file, refuse a folder, name a
// missing folder before the run, and leave nothing behind.
func TestHostilePictures(t *testing.T) {
	existingAs := func(name string) func(t *testing.T, dir string) string {
		return func(t *testing.T, dir string) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	folder := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "slides")
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := func(t *testing.T, dir string) string { return filepath.Join(dir, "no-such-folder", "d.svg") }
	none := func(t *testing.T, dir string) string { return filepath.Join(dir, "d.svg") }
	// The transcript is new, the picture that would go beside it is there: the picture is watched.
	pictureThere := func(t *testing.T, dir string) ([]string, string) {
		pic := existingAs("handout.svg")(t, dir)
		return []string{"run", "after", "--transcript", filepath.Join(dir, "handout.md"), "--report-dir", ""}, pic
	}
	runHostile(t, "pictures", []hostileCase{
		{name: "run --diagram FILE that exists", setup: at(existingAs("slide.svg"), "run", "after", "--diagram", "FILE", "--report-dir", ""),
			code: exitUsage, msg: "--diagram", unchanged: true},
		{name: "run --diagram FOLDER", setup: at(folder, "run", "after", "--diagram", "FILE", "--report-dir", ""),
			code: exitUsage, msg: "a folder; name a new file in it"},
		{name: "run --diagram in a folder that does not exist", setup: at(missing, "run", "after", "--diagram", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "--diagram"},
		{name: "run --cast FILE that exists", setup: at(existingAs("run.cast"), "run", "after", "--cast", "FILE", "--report-dir", ""),
			code: exitUsage, msg: "--cast", unchanged: true},
		{name: "run --cast in a folder that does not exist", setup: at(missing, "run", "after", "--cast", "FILE", "--report-dir", ""),
			code: exitEnvError, msg: "--cast"},
		{name: "run --cast-size 60x20", setup: at(none, "run", "after", "--cast", "FILE", "--cast-size", "60x20", "--report-dir", ""),
			code: exitUsage, msg: "--cast-size"},
		{name: "run --transcript X.md when X.svg exists", setup: pictureThere,
			code: exitUsage, msg: "handout.svg: the file exists", unchanged: true},
		{name: "run --compare --diagram", setup: at(none, "run", "after", "--compare", "--diagram", "FILE", "--report-dir", ""),
			code: exitUsage, msg: "--compare prints one table"},
	})
}

// TestWriteNewFileLeavesNothingHalfWritten: a write that fails leaves neither the file nor its
// temporary file.
func TestWriteNewFileLeavesNothingHalfWritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.svg")
	err := writeNewFile("--diagram", path, func(w io.Writer) error {
		_, _ = io.WriteString(w, "<svg")
		return errors.New("the disk is full")
	})
	if err == nil || !strings.Contains(err.Error(), "--diagram "+path) {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

// ansiCodes are the terminal's escape sequences, for reading a frame as text.
var ansiCodes = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// TestRunCast: run --cast writes an asciicast v2 file: a header line (version 2, the size, a
// timestamp, a title), then one output event a line, in increasing time, a step apart, each a
// whole lab screen of the size; the first the opened lab, the last the verdict the run printed.
// With LEASELAB_ASCIINEMA=1, asciinema (apt install asciinema) must play it.
func TestRunCast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stale-owner.cast")
	code, out, errOut := cli(t, "run", "stale-owner", "--cast", path, "--cast-size", "100x30", "--report-dir", "")
	if code != exitOK || !strings.Contains(out, "Cast saved: "+path) {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		t.Fatal("an empty cast")
	}
	var head struct {
		Version, Width, Height int
		Timestamp              int64
		Title                  string
	}
	if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
		t.Fatalf("header %q: %v", sc.Text(), err)
	}
	if head.Version != 2 || head.Width != 100 || head.Height != 30 || head.Timestamp <= 0 || head.Title != "leaselab run stale-owner" {
		t.Fatalf("header %+v", head)
	}
	var screens []string
	last := -1.0
	for sc.Scan() {
		var ev []any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %d %q: %v", len(screens)+2, sc.Text(), err)
		}
		at, ok1 := ev[0].(float64)
		kind, ok2 := ev[1].(string)
		data, ok3 := ev[2].(string)
		if len(ev) != 3 || !ok1 || !ok2 || !ok3 || kind != "o" {
			t.Fatalf("line %d: %v is not [time, \"o\", data]", len(screens)+2, ev)
		}
		if at <= last {
			t.Fatalf("line %d: time %v after %v", len(screens)+2, at, last)
		}
		last = at
		screen := strings.TrimSuffix(ansiCodes.ReplaceAllString(data, ""), "\r\n")
		lines := strings.Split(screen, "\r\n")
		if len(lines) > head.Height {
			t.Fatalf("frame %d has %d lines, more than %d", len(screens), len(lines), head.Height)
		}
		screens = append(screens, screen)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(screens) < 8 {
		t.Fatalf("%d screens for stale-owner's steps", len(screens))
	}
	if !strings.Contains(screens[0], "STALE") && !strings.Contains(screens[0], "stale") {
		t.Errorf("the first screen does not name the lesson:\n%s", screens[0])
	}
	_, verdict, _ := strings.Cut(out, "== Verdict ==\n")
	verdict, _, _ = strings.Cut(verdict, "\n")
	end := screens[len(screens)-1]
	if verdict == "" || !strings.Contains(end, verdict) || !strings.Contains(end, "VERDICT: PASS") {
		t.Errorf("the run printed %q; the last screen:\n%s", verdict, end)
	}
	if !strings.Contains(strings.Join(screens, "\n"), "PREDICT") {
		t.Error("no screen shows the lesson's question")
	}
	if os.Getenv("LEASELAB_ASCIINEMA") == "1" {
		cmd := exec.Command("asciinema", "play", "--speed", "100", path)
		cmd.Stdin = strings.NewReader("")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("asciinema play: %v\n%s", err, b)
		}
	}
}

// TestRunCastRefusesACode: a cast records a run from its start, so run --code … --cast is
// refused before anything runs, naming both flags.
func TestRunCastRefusesACode(t *testing.T) {
	code, out, errOut := cli(t, "share", "after")
	if code != exitOK {
		t.Fatalf("share after: exit %d: %s", code, errOut)
	}
	path := filepath.Join(t.TempDir(), "c.cast")
	code, _, errOut = cli(t, "run", "--code", strings.TrimSpace(out), "--cast", path, "--report-dir", "")
	if code != exitUsage || !strings.Contains(errOut, "--cast records a run from its start") || !strings.Contains(errOut, "--code") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("the cast was written")
	}
}
