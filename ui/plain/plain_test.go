package plain

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/store"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// opener opens a scenario on a fresh SQLite file of the test's, closing the one before, as the
// lab's root does.
func opener(t *testing.T) func(ctx context.Context, name string) (*engine.Session, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lab.db")
	var closeAll func()
	t.Cleanup(func() {
		if closeAll != nil {
			closeAll()
		}
	})
	return func(ctx context.Context, name string) (*engine.Session, error) {
		if closeAll != nil {
			closeAll()
			closeAll = nil
		}
		data, source, err := assets.Load(name, scenario.MaxScenarioSize)
		if err != nil {
			return nil, err
		}
		sc, err := scenario.Parse(source, data)
		if err != nil {
			return nil, err
		}
		db, err := store.Create(ctx, path)
		if err != nil {
			return nil, err
		}
		s, err := engine.NewSession(ctx, sc, db)
		if err != nil {
			db.Close()
			return nil, err
		}
		closeAll = func() { s.Close(); db.Close() }
		return s, nil
	}
}

// drive runs plain mode on lesson name with keys, one a line, and returns what it printed.
func drive(t *testing.T, name string, keys ...string) string {
	t.Helper()
	var out bytes.Buffer
	in := strings.NewReader(strings.Join(keys, "\n") + "\n")
	if err := Run(context.Background(), Config{Start: name, Open: opener(t), In: in, Out: &out}); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out.String())
	}
	return out.String()
}

// repeat is key n times.
func repeat(key string, n int) []string { return slices.Repeat([]string{key}, n) }

// plainText fails unless out is what plain mode promises: ASCII, no escape sequence, no
// control character but the newline.
func plainText(t *testing.T, name, out string) {
	t.Helper()
	for i := 0; i < len(out); i++ {
		if c := out[i]; c >= 0x80 || c == 0x1b || (c < 0x20 && c != '\n') {
			line := strings.Count(out[:i], "\n") + 1
			t.Fatalf("%s: byte 0x%02x at line %d: plain mode writes ASCII without escape sequences\n%s", name, c, line, out)
		}
	}
}

// goldenLessons are whole lessons driven by keys, as a person would press them: keys (or, when
// nil, the keys playKeys presses to the lesson's end, every other answer wrong), then q.
var goldenLessons = []struct {
	name, lesson string
	keys         []string
}{
	// The BEFORE story: two naive workers load every row and process each twice.
	{"before", "before", nil},
	// Predict, then step: the stale owner's two questions, one answered right, one wrong.
	{"stale-owner", "stale-owner", nil},
	// The playground by hand: claims, a crash, the clock past the lease, a reclaim, a step
	// back, a worker selected by number, a toggle, the keys, and keys that do nothing here.
	{"playground", "playground", []string{"n", "n", "n", "x", "+", "f", "n", "n", "n", "b", "2", "s", "left", "r",
		"l", "?", "i", "g", "hello", "A", "9", "right", "z", "n", "z", "esc"}},
}

// TestPlainGolden drives whole lessons through plain mode with piped keys and compares what it
// printed with testdata/NAME.golden (go test ./ui/plain -update rewrites them).
func TestPlainGolden(t *testing.T) {
	for _, tc := range goldenLessons {
		t.Run(tc.name, func(t *testing.T) {
			keys := tc.keys
			if keys == nil {
				keys = playKeys(t, tc.lesson, rightThenWrong)
			}
			got := drive(t, tc.lesson, append(keys, "q")...)
			plainText(t, tc.name, got)
			file := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (go test ./ui/plain -run Golden -update writes it)", err)
			}
			if got != string(want) {
				t.Fatalf("plain mode's %s is not %s (rewrite with -update if the change is meant):\n%s", tc.name, file, got)
			}
		})
	}
}

// playKeys plays lesson name to its end as a person would: space, and at each question an
// answer (answer picks it from the question's number, 0 first, and the answer the script
// expects). It returns the keys it pressed, for drive.
func playKeys(t *testing.T, name string, answer func(n, right, of int) int) []string {
	t.Helper()
	ctx := context.Background()
	l, err := open(ctx, Config{Start: name, Open: opener(t)}, &printer{w: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	asked := 0
	for i := 0; i < 5000 && !l.f.Done; i++ {
		k := "n"
		if l.ask != nil {
			_, ans, _ := l.run.question()
			k = l.keys.lab.Answer.Keys()[answer(asked, ans.Right, len(l.ask.q.Answers))]
			asked++
		}
		keys = append(keys, k)
		if _, err := l.handle(ctx, press{name: k}); err != nil {
			t.Fatal(err)
		}
	}
	if !l.f.Done {
		t.Fatalf("%s: not done after %d keys", name, len(keys))
	}
	return keys
}

// rightThenWrong answers the first question right, the next wrong, and so on.
func rightThenWrong(n, right, of int) int {
	if n%2 == 0 {
		return right
	}
	return (right + 1) % of
}

// TestPlainIsASCII plays every built-in lesson on SQLite to its end through plain mode and
// fails on any byte beyond ASCII, any ESC or other control character, and any mark of the
// engine's words that plain mode has no ASCII word for.
func TestPlainIsASCII(t *testing.T) {
	for _, name := range assets.Names() {
		data, source, err := assets.Load(name, scenario.MaxScenarioSize)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scenario.Parse(source, data)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(sc.Requires, engine.CapRowLocks) || sc.Backend != "" {
			continue // a lesson of PostgreSQL's
		}
		if sc.Messages > 50 && os.Getenv("LEASELAB_PLAIN_ALL") == "" {
			continue // many-workers: 500 messages, 40 s on 2 cores; LEASELAB_PLAIN_ALL=1 plays it
		}
		t.Run(name, func(t *testing.T) {
			keys := append(playKeys(t, name, rightThenWrong), "?", "b", "q")
			var out bytes.Buffer
			p := &printer{w: &out}
			l, err := open(context.Background(), Config{Start: name, Open: opener(t)}, p)
			if err != nil {
				t.Fatal(err)
			}
			intro(p, l.f, l.keys)
			for _, k := range keys {
				if _, err := l.handle(context.Background(), press{name: k}); err != nil {
					t.Fatal(err)
				}
			}
			plainText(t, name, out.String())
			if p.unknown > 0 {
				t.Fatalf("%s: %d marks had no ASCII word (printed as '?'):\n%s", name, p.unknown, out.String())
			}
			if !strings.Contains(out.String(), "VERDICT: ") {
				t.Fatalf("%s: no verdict read out:\n%s", name, out.String())
			}
		})
	}
}

// V redrives a dead letter as the lab's dead letters pane does: dead-letter played to its end,
// V puts PAY-004 back to Pending with its attempts reset, a second V finds nothing parked, and
// space lets the workers take it up again until it is parked once more and the verdict is said.
func TestPlainRedrivesADeadLetter(t *testing.T) {
	keys := append(playKeys(t, "dead-letter", rightThenWrong), "V", "V", "?")
	keys = append(keys, repeat("n", 40)...)
	out := drive(t, "dead-letter", append(keys, "q")...)
	plainText(t, "dead-letter", out)
	if strings.Contains(out, "V does nothing") {
		t.Fatalf("V is not plain mode's:\n%s", out)
	}
	end := strings.Index(out, "PAY-004 redriven: back to Pending")
	if end < 0 || !strings.Contains(out[:end], "Dead-lettered: PAY-004, parked, never claimed again; V redrives it") {
		t.Fatalf("no redrive of PAY-004 after it was parked:\n%s", out)
	}
	after := out[end:]
	for _, want := range []string{
		"Row PAY-004: Status Pending (was DeadLettered)",
		"No row is DeadLettered: V redrives",
		"V: redrive a dead letter",
		"(was Pending)",
		"VERDICT: PASS",
		"Expectations not judged",
	} {
		if !strings.Contains(after, want) {
			t.Fatalf("no %q after the redrive:\n%s", want, after)
		}
	}
}

// A share code's moves (Config.Replay) are made on the scenario as it opens, through the
// history: plain mode says it opened from a code with so many moves, the rows at that moment,
// and b steps back through them. A move that cannot be made stops the replay, and says where.
func TestPlainReplaysAShareCodesMoves(t *testing.T) {
	run := func(moves []engine.Command, keys ...string) string {
		var out bytes.Buffer
		in := strings.NewReader(strings.Join(keys, "\n") + "\n")
		if err := Run(context.Background(), Config{Start: "playground", Open: opener(t), In: in, Out: &out, Replay: moves}); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		plainText(t, "replay", out.String())
		return out.String()
	}
	moves := []engine.Command{engine.CmdStepWorker{Worker: 0}, engine.CmdStepWorker{Worker: 1}, engine.CmdStepWorker{Worker: 0}}
	out := run(moves, "b", "b", "b", "b", "q")
	for _, want := range []string{
		"Lesson playground:",
		"Opened from a share code: its 3 moves made again, on this database; b steps back through them",
		"Step 3:\nSettings:",
		"The outbox holds 6 messages:",
		"Back at step 2 of 3",
		"Back at step 0 of 3",
		"at the start: nothing to step back to.",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	out = run([]engine.Command{engine.CmdStepWorker{Worker: 0}, engine.CmdStepWorker{Worker: 8}}, "q")
	if !strings.Contains(out, "The share code's moves stopped at step 1: the code's move 2 of 2:") || strings.Contains(out, "Opened from") {
		t.Fatalf("a move of a worker the scenario does not have did not stop the replay:\n%s", out)
	}
}
