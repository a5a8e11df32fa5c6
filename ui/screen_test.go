package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
	"leaselab/ui/common"
)

// TestEveryLessonFitsTheScreen steps every built-in lesson to its end at 80×24, at 120×40 and
// at 110×30 and, on every screen on the way, fails when something a workshop step points at is cut or
// missing: an ellipsis in the header, the ledgers, the checks or the verdict; a column of the
// table; a check of the verdict without its own line; the lesson's key; the status line.
func TestEveryLessonFitsTheScreen(t *testing.T) {
	skipSweepUnderRace(t)
	for _, name := range sqliteLessons() {
		// 110×30 is the smallest wide layout.
		for _, size := range [][2]int{{80, 24}, {120, 40}, {110, 30}} {
			t.Run(fmt.Sprintf("%s/%dx%d", name, size[0], size[1]), func(t *testing.T) {
				if name == "many-workers" && (testing.Short() || size[0] == 110) {
					t.Skip("1,500 steps")
				}
				l := newLab(t, name, size[0], size[1], engine.Overrides{})
				every := 1
				if len(l.m.frame.Rows) > 50 {
					every = 97 // many-workers: a sample of its 1,500 screens
				}
				screenFits(t, l, "the start")
				overlaysFit(t, l, "the start")
				for i := 1; i <= 5000 && !l.m.frame.Done; i++ {
					if l.m.ask.Open == nil {
						l.press(" ")
					}
					if l.m.ask.Open != nil { // a lesson's question: its screen, and its ? screen
						screenFits(t, l, fmt.Sprintf("the question before step %d", i))
						l.press("?")
						checkSize(t, l.view(), size[0], size[1])
						l.press("?")
						l.press(l.m.keys.Answer.Keys()[(l.m.ask.Open.Right+1)%len(l.m.ask.Open.Answers)])
					}
					if i%every == 0 || l.m.frame.Done {
						screenFits(t, l, fmt.Sprintf("step %d", i))
					}
				}
				if !l.m.frame.Done {
					t.Fatal("not done after 5000 steps")
				}
				screenFits(t, l, "the end")
				overlaysFit(t, l, "the end")
			})
		}
	}
}

// overlaysFit opens and closes each overlay at a moment of l (the ? screen, the explanation,
// the SQL pane and the diagram) and checks that each fits, and that the screen after is whole.
func overlaysFit(t *testing.T, l *lab, at string) {
	t.Helper()
	w, h := l.m.layout.width, l.m.layout.height
	for _, k := range []string{"?", "i", "v", "t"} {
		l.press(k)
		v := l.view()
		checkSize(t, v, w, h)
		if k == "t" {
			for _, line := range strings.Split(v, "\n") {
				if strings.Contains(line, "─ ") && strings.Contains(line, common.Ellipsis+" ─") {
					t.Fatalf("%s at %dx%d, %s: the diagram's title is cut: %q", l.m.frame.Name, w, h, at, line)
				}
			}
		}
		l.press(k)
	}
	screenFits(t, l, at+", after the overlays")
}

// openMark is the mark of a check that waits for the run to finish, in a line and in a title:
// an ellipsis that is no cut.
var openMark = regexp.MustCompile(`^… (open )?|… \d+ open`)

// screenFits checks one screen of l; at is the moment, for the message.
func screenFits(t *testing.T, l *lab, at string) {
	t.Helper()
	m := l.m
	lay, f := m.layout, m.frame
	v := l.view()
	lines := strings.Split(v, "\n")
	checkSize(t, v, lay.width, lay.height)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s at %dx%d, %s: %s\n%s", f.Name, lay.width, lay.height, at, fmt.Sprintf(format, args...), v)
	}
	plain := func(i int) string { return ansi.Strip(lines[i]) }

	// The header: nothing cut, and the lesson's key beside its ◆.
	for i := 0; i < headerLines; i++ {
		if strings.Contains(plain(i), common.Ellipsis) {
			fail("header line %d is cut: %q", i+1, plain(i))
		}
	}
	if _, ok := engine.LookupToggle(f.Teaches); ok {
		head := plain(0) + "\n" + plain(1) + "\n" + plain(2)
		if key := common.KeyName(m.keys.toggleKey(f.Teaches)); !strings.Contains(head, "◆") || !strings.Contains(head, "("+key+")") {
			fail("the header does not show the lesson's toggle %s with its key (%s)", f.Teaches, key)
		}
	}

	// The table: its heading names every column the lesson talks about.
	tableAt := headerLines + b2i(lay.tableTitle)
	for _, col := range []string{"Status", "Payment", "LockedBy", "LockedUntil", "Lease", "Cl", "v"} {
		if !strings.Contains(strings.ToLower(plain(tableAt)), strings.ToLower(col)) {
			fail("the table's heading lacks %s: %q", col, plain(tableAt))
		}
	}
	for i := tableAt + 1; i <= tableAt+lay.tableRows; i++ {
		if row := plain(i); strings.Contains(row, "Processing") && !strings.ContainsAny(row, "█░") && !strings.Contains(row, "EXPIRED") {
			fail("a Processing row without its lease bar: %q", row)
		}
	}

	// The ledgers and the checks: nothing cut; every check of the verdict on a line of its own.
	rowAt := tableAt + 1 + lay.tableRows + lay.workers()
	cw := lay.checksW()
	var checkCol []string
	for i := rowAt; i < rowAt+lay.row(); i++ {
		line := plain(i)
		left, right := ansi.Cut(line, 0, lay.ledgersW), ansi.Cut(line, lay.ledgersW+2, lay.ledgersW+2+cw)
		if strings.Contains(left, common.Ellipsis) {
			fail("a ledger line is cut: %q", left)
		}
		if strings.Contains(openMark.ReplaceAllString(right, ""), common.Ellipsis) {
			fail("a check line is cut: %q", right)
		}
		checkCol = append(checkCol, right)
	}
	for _, c := range f.Summary.Checks {
		found := false
		for _, line := range checkCol {
			if strings.Contains(line, c.Name) || c.Short != "" && strings.Contains(line, c.Short) {
				found = true // its whole name, or its short one where the whole does not fit
			}
		}
		if c.Decides && !found {
			fail("the check %q of the verdict is not on a line of its own", c.Name)
		}
	}

	// The verdict, or what the scenario expects: nothing cut; the verdict always there at the end.
	verdictAt := rowAt + lay.row()
	for i := verdictAt; i < verdictAt+lay.verdict; i++ {
		if strings.Contains(plain(i), common.Ellipsis) {
			fail("the verdict is cut: %q", plain(i))
		}
	}
	if f.Done && !strings.Contains(v, "VERDICT: ") {
		fail("done, but no verdict")
	}

	// Every worker of a two-worker run has its line (at the verdict too); the ledgers keep a
	// rejected finalize the verdict talks about.
	if len(f.Workers) <= 2 {
		for _, w := range f.Workers {
			if !strings.Contains(v, w.Name+" ") {
				fail("the Workers pane lacks %s", w.Name)
			}
		}
	}
	if f.Total.RejectedFinalizes > 0 && !strings.Contains(v, "rejected finalizes") {
		fail("%d rejected finalizes, and the ledgers lack the line", f.Total.RejectedFinalizes)
	}

	// The status line sits above the footer, under the history's timeline.
	tl := m.track.Line.Lines()
	if lay.status-tl < m.statusLine().NoteLines(lay.width) {
		tl = 0 // no room: statusView leaves the timeline out
	}
	status := plain(lay.height - lay.help - lay.status + tl)
	if !strings.HasPrefix(status, "› ") && !strings.HasPrefix(status, "! ") && !strings.HasPrefix(status, "✗ ") {
		fail("no status line above the footer: %q", status)
	}

}

// At 80×24 the event log gives way to the checks, so a note that repeats the newest event is the
// only place the room reads it: it takes its second line rather than being cut.
func TestNarrowStatusSaysTheEventInFull(t *testing.T) {
	l := newLab(t, "playground", 80, 24, engine.Overrides{})
	l.press("n", "x")
	if l.m.layout.events != 0 {
		t.Skip("the event log is on screen at 80×24: nothing to test")
	}
	v := strings.ReplaceAll(l.view(), "\n", " ")
	l.must("Worker-A CRASHED holding PAY-001")
	if !strings.Contains(v, "LockedBy=Worker-A until 09:00:00.500Z") {
		t.Fatalf("the crash's note is cut at 80×24:\n%s", l.view())
	}
}
