package ui

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/diagram"
)

// afterEvents is a recorded run of "after" to its end. Its concurrent phase differs from run to
// run (who wins each claim), so the goldens draw one recorded run; -update on the after goldens
// records a new one from the lab: go test ./ui -run 'TestDiagramGolden/after' -update
const afterEvents = "testdata/diagram-after.events.json"

// runToEnd opens name in the lab at w×h and presses e, which runs it to its end.
func runToEnd(t *testing.T, name string, w, h int) *lab {
	t.Helper()
	l := newLab(t, name, w, h, engine.Overrides{})
	l.press("e")
	if !l.m.frame.Done {
		t.Fatalf("%s not done after e: %s", name, l.m.status.Text)
	}
	return l
}

func workerNames(f *common.Frame) []string {
	var ws []string
	for _, w := range f.Workers {
		ws = append(ws, w.Name)
	}
	return ws
}

// afterRecord is the recorded run: the lanes and the events.
type afterRecord struct {
	Workers []string
	Events  []engine.Event
}

// recordAfter runs after to its end in the lab and writes its events to afterEvents.
func recordAfter(t *testing.T) {
	t.Helper()
	l := runToEnd(t, "after", 120, 40)
	data, err := json.MarshalIndent(afterRecord{workerNames(l.m.frame), l.m.frame.Events}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(afterEvents, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordedAfter returns the recorded run of after.
func recordedAfter(t *testing.T) ([]engine.Event, []string) {
	t.Helper()
	data, err := os.ReadFile(afterEvents)
	if err != nil {
		t.Fatal(err)
	}
	var rec afterRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", afterEvents, err)
	}
	return rec.Events, rec.Workers
}

// The diagram of after (recorded) and of stale-owner, each at the room the lab gives it at
// 120×40 and 80×24 (the screen less the header, the status line and the footer); stale-owner
// also as the whole lab screen after e and t.
func TestDiagramGolden(t *testing.T) {
	var record sync.Once // -update records a new run of after, once, for both sizes
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		w, h := size[0], size[1]
		name := func(s string) string { return s + "_" + itoa(w) + "x" + itoa(h) }
		t.Run(name("after"), func(t *testing.T) {
			if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
				record.Do(func() { recordAfter(t) })
			}
			events, workers := recordedAfter(t)
			l := newLab(t, "playground", w, h, engine.Overrides{})
			in := diagram.Input{Name: "after", Events: events, Workers: workers, Width: w, Height: l.m.diagram.H,
				Hint: common.KeyNames(l.m.diagram.Keys.Earlier, l.m.diagram.Keys.Later) + " earlier/later"}
			v := diagram.Render(in)
			checkSize(t, v, w, in.Height)
			golden.RequireEqual(t, []byte(v))
		})
		t.Run(name("stale-owner"), func(t *testing.T) {
			l := runToEnd(t, "stale-owner", w, h)
			l.press("t")
			v := l.view()
			checkSize(t, v, w, h)
			golden.RequireEqual(t, []byte(v))
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// Every lease is a bar from the column of its claim to the column of its LockedUntilUtc (after
// its last renewal), and that column is in its place in time: after every event up to that
// instant and before every later one.
func TestDiagramBarsRunFromClaimToLockedUntil(t *testing.T) {
	for _, name := range []string{"after", "stale-owner", "naive-claim", "aba-fencing", "lease-too-short", "before"} {
		t.Run(name, func(t *testing.T) {
			l := runToEnd(t, name, 120, 40)
			f := l.m.frame
			st := diagram.Build(f.Events, workerNames(f))
			claims := 0
			for _, col := range st.Cols {
				if col.Ev != nil && (col.Ev.Kind == engine.EvClaim || col.Ev.Kind == engine.EvTake) && col.Ev.SetsLease() {
					claims++
				}
			}
			if claims == 0 && name != "before" {
				t.Fatal("no claim in the run")
			}
			if len(st.Leases) != claims {
				t.Fatalf("%d bars for %d claims", len(st.Leases), claims)
			}
			for _, ls := range st.Leases {
				claim := st.Cols[ls.Start].Ev
				if claim == nil || !claim.SetsLease() || diagram.PlainText(claim.Key) != ls.Key || claim.Version != ls.Version {
					t.Fatalf("bar %s v%d starts at column %d, which is not its claim: %+v", ls.Key, ls.Version, ls.Start, claim)
				}
				// Its LockedUntilUtc: the claim's, or that of the worker's last renewal of it
				// before its next claim of the message.
				until := claim.Until
				for _, col := range st.Cols[ls.Start+1:] {
					e := col.Ev
					if e == nil || e.Worker != claim.Worker || e.Key != claim.Key {
						continue
					}
					if e.Kind == engine.EvClaim || e.Kind == engine.EvTake {
						break
					}
					if e.Kind == engine.EvRenew && e.Outcome == engine.OutcomeRenewed {
						until = e.Until
					}
				}
				end := st.Cols[ls.End]
				if !end.End || !end.At.Equal(until) {
					t.Errorf("bar %s v%d ends at column %d (%s, end=%v), want its LockedUntilUtc %s",
						ls.Key, ls.Version, ls.End, engine.FormatClock(end.At), end.End, engine.FormatClock(until))
				}
				for c, col := range st.Cols {
					if col.Ev != nil && (c < ls.End) != !col.At.After(until) {
						t.Errorf("bar %s v%d: event column %d at %s is on the wrong side of its end %s",
							ls.Key, ls.Version, c, engine.FormatClock(col.At), engine.FormatClock(until))
					}
				}
				// Drawn: the claim's mark at the first cell, the cap at the last, none between.
				for _, cw := range []int{diagram.MinColumnCells, diagram.MaxColumnCells} {
					row := []rune(common.Spaces(len(st.Cols)*cw + 1))
					diagram.DrawBar(row, ls, cw)
					if m := row[ls.Start*cw]; !slices.Contains([]rune{diagram.MarkClaim, diagram.MarkReclaim, diagram.MarkTake}, m) {
						t.Errorf("bar %s v%d starts with %q", ls.Key, ls.Version, m)
					}
					if row[ls.End*cw] != diagram.FillEnd || slices.Contains(row[ls.Start*cw:ls.End*cw], diagram.FillEnd) {
						t.Errorf("bar %s v%d: cap not (only) at its end: %q", ls.Key, ls.Version, string(row))
					}
				}
			}
		})
	}
}

// The lesson's moments are on the diagram of stale-owner: A's bar ends before B's reclaim, and
// A's rejected finalize stands after the end of A's lease.
func TestDiagramShowsTheStaleOwner(t *testing.T) {
	l := runToEnd(t, "stale-owner", 120, 40)
	l.press("t")
	l.must("PAY-001 v1", "PAY-001 v2", "Z pause", "REJECTED: 0 rows, rolled back", "R reclaim")
	v := l.view()
	var barA string
	for _, line := range strings.Split(v, "\n") {
		if strings.HasPrefix(line, "Worker-A ") {
			barA = line
		}
	}
	if cap, rej := strings.Index(barA, "|"), strings.Index(barA, "!"); cap < 0 || rej < cap {
		t.Errorf("Worker-A's rejected finalize is not after its lease's end: %q", barA)
	}
	if !strings.Contains(barA, "C") || !strings.Contains(barA, "Z~") {
		t.Errorf("Worker-A's lane lacks its claim or its pause: %q", barA)
	}
	l.must("Worker-A's finalize of PAY-001 at 0.501s changed 0 rows and rolled back: its lease v1 had ended at 0.5s",
		"Worker-B reclaimed PAY-001 at 0.501s as v2: Worker-A's v1 had ended at 0.5s")
	// Without the ownership check the same late write goes through: V, and the moment says so.
	off := newLab(t, "stale-owner", 120, 40, engine.Overrides{Toggles: map[string]bool{engine.ToggleOwnershipCheck: false}})
	off.press("e", "t")
	off.must("V wrote WITHOUT OWNING", "Worker-A's finalize of PAY-001 at 0.501s wrote WITHOUT OWNING the row")
	off.mustNot("REJECTED")
	// t again: the outbox is back.
	l.press("t")
	l.must("Outbox")
	l.mustNot("SPACE-TIME")
}

func TestDiagramScrollsInTime(t *testing.T) {
	events, workers := recordedAfter(t)
	in := diagram.Input{Name: "after", Events: events, Workers: workers, Width: 80, Height: 19, Hint: "{ } earlier/later"}
	most := diagram.ScrollMax(in)
	if most == 0 {
		t.Fatal("after fits at 80 columns: nothing to scroll")
	}
	st := diagram.Build(events, workers)
	n := len(st.Cols)
	title := func(scroll int) string {
		in.Scroll = scroll
		return strings.Split(diagram.Render(in), "\n")[0]
	}
	if s := title(0); !strings.Contains(s, "–"+itoa(n)+" of "+itoa(n)) {
		t.Errorf("scroll 0 does not end at the latest column: %q", s)
	}
	if s := title(most); !strings.Contains(s, "columns 1–") {
		t.Errorf("scroll %d does not start at the first column: %q", most, s)
	}
	if title(most+50) != title(most) || title(-3) != title(0) {
		t.Error("a scroll beyond the ends is not held at them")
	}
	in.Scroll = most
	if v := diagram.Render(in); !strings.Contains(v, "PAY-001 v1") || strings.Contains(v, "PAY-001 v2") {
		t.Errorf("the start of the run lacks A's first lease or shows B's reclaim:\n%s", v)
	}

	// In the lab: the scroll keys are off until t, then move the diagram and stop at its ends.
	l := runToEnd(t, "after", 80, 24)
	l.press("{")
	if l.m.diagram.Scroll != 0 || l.m.diagram.Keys.Earlier.Enabled() {
		t.Fatal("the diagram's scroll key works while the diagram is closed")
	}
	l.press("t")
	l.must("SPACE-TIME after", common.KeyNames(l.m.diagram.Keys.Earlier, l.m.diagram.Keys.Later)+" earlier/later")
	latest := l.view()
	l.press("{")
	if l.m.diagram.Scroll != min(diagram.Step, diagram.ScrollMax(l.m.diagram.Input(l.m.scene()))) || l.view() == latest {
		t.Fatalf("{ did not scroll back: scroll %d", l.m.diagram.Scroll)
	}
	for i := 0; i < 20; i++ {
		l.press("{")
	}
	l.must("columns 1–")
	for i := 0; i < 20; i++ {
		l.press("}")
	}
	if l.m.diagram.Scroll != 0 || l.view() != latest {
		t.Error("} does not come back to the latest columns")
	}
}

// The diagram never draws outside the window, even with eight workers at 80×24.
func TestDiagramFitsTheWindow(t *testing.T) {
	l := newLab(t, "playground", 80, 24, engine.Overrides{Messages: 30, Workers: 8})
	l.press("n", "n", "x", "n", "f", "n", "n", "t")
	for _, size := range [][2]int{{80, 24}, {120, 40}, {100, 30}, {200, 60}, {79, 24}, {20, 3}} {
		l.send(windowSize(size[0], size[1]))
		checkSize(t, l.view(), size[0], size[1])
	}
	l.send(windowSize(80, 24))
	l.must("SPACE-TIME", "Worker-A")
}

// diagramShotKeys are the keys of the diagram's screenshot, pressed in a fresh lab: tab to
// stale-owner, run it to its end (e), then t.
var diagramShotKeys = []string{"tab", "tab", "tab", "tab", "e", "t"}

// assets/screenshots/lab-diagram.txt is what the lab draws after diagramShotKeys at 120×40, as
// the real program drew it in tmux. Where assets/screenshots/shots lists the screenshots (then
// TestScreenshotsAreTheProgram compares each one), it must list this one with these keys.
func TestDiagramScreenshotIsTheProgram(t *testing.T) {
	dir := filepath.Join("..", "assets", "screenshots")
	if shots, err := os.ReadFile(filepath.Join(dir, "shots")); err == nil {
		line := "lab-diagram 120x40 " + strings.Join(diagramShotKeys, " ")
		if !slices.Contains(strings.Split(string(shots), "\n"), line) {
			t.Fatalf("assets/screenshots/shots lacks the line %q", line)
		}
		t.Skip("TestScreenshotsAreTheProgram compares lab-diagram.txt with the program")
	}
	want, err := os.ReadFile(filepath.Join(dir, "lab-diagram.txt"))
	if err != nil {
		t.Fatal(err)
	}
	l := newLab(t, "playground", 120, 40, engine.Overrides{})
	l.press(diagramShotKeys...)
	got := strings.ReplaceAll(l.view(), shownPath, "/tmp/workshop.db")
	trim := func(s string) string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i := range lines {
			lines[i] = strings.TrimRight(lines[i], " ")
		}
		return strings.Join(lines, "\n")
	}
	if trim(got) != trim(string(want)) {
		t.Errorf("lab-diagram.txt differs from the lab's screen (remake it as assets/screenshots/make.sh does):\n--- lab\n%s\n--- lab-diagram.txt\n%s",
			trim(got), trim(string(want)))
	}
}

// Eight workers fit at 80×24 with their keys inside the bars; more lanes than lines say how
// many are hidden.
func TestDiagramManyWorkers(t *testing.T) {
	l := runToEnd(t, "many-workers", 80, 24)
	l.press("t")
	l.must("Worker-A", "Worker-H", "key  C claim")
	l.mustNot("more workers below")
	var names []string
	for i := 0; i < 12; i++ {
		names = append(names, "W"+itoa(i))
	}
	v := diagram.Render(diagram.Input{Name: "x", Events: l.m.frame.Events, Workers: names, Width: 80, Height: 12})
	checkSize(t, v, 80, 12)
	if !strings.Contains(v, "more workers below") || len(strings.Split(v, "\n")) != 12 {
		t.Errorf("twelve lanes in 12 lines do not say what is hidden:\n%s", v)
	}
}

// Without leasing there are no bars: the provider calls carry their message's key.
func TestDiagramWithoutLeasesNamesTheMessages(t *testing.T) {
	l := runToEnd(t, "before", 120, 40)
	l.press("t")
	l.must("L load", "* provider call")
	v := l.view()
	for _, w := range []string{"Worker-A", "Worker-B"} {
		lines := strings.Split(v, "\n")
		i := slices.IndexFunc(lines, func(s string) bool { return strings.HasPrefix(s, w+" ") })
		if i < 1 || !strings.Contains(lines[i-1], "PAY-001") || !strings.Contains(lines[i], "*") {
			t.Errorf("%s's provider call on PAY-001 is not named above its lane:\n%s", w, v)
		}
	}
}

// The diagram is drawn on every frame: from the 200 events a frame keeps, of eight workers.
func BenchmarkRenderDiagram(b *testing.B) {
	l := newLab(b, "many-workers", 120, 40, engine.Overrides{})
	l.press("e", "t")
	in := l.m.diagram.Input(l.m.scene())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = diagram.Render(in)
	}
}
