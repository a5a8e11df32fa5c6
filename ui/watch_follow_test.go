package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// With 50 rows at 120×40 the table shows about 25; the rows a worker process works on stay in
// view as it goes down the outbox, until the user scrolls away.
func TestWatchFollowsTheWork(t *testing.T) {
	s := newShared(t, 50)
	w := newWatcher(t, s.db, 120, 40)
	if v := w.m.outbox.Visible(); v >= 50 || v < 10 {
		t.Fatalf("%d rows visible of 50: the test needs a table that scrolls", v)
	}
	at := watchT0
	for i := 1; i <= 45; i++ {
		at = at.Add(100 * time.Millisecond)
		m := s.claim("Worker-P1", at, 2*time.Second)
		w.pollAt(at.Add(10 * time.Millisecond))
		key := fmt.Sprintf(" PAY-%03d ", i)
		if row := w.line(key); !strings.Contains(row, "Processing") {
			t.Fatalf("the row being processed is not shown Processing: %q", row)
		}
		s.finalize("Worker-P1", m, at.Add(50*time.Millisecond))
		w.pollAt(at.Add(60 * time.Millisecond))
	}
	// The user scrolls to the top: the table stays there while the work goes on below.
	w.press("home")
	w.must(" PAY-001 ", "scrolled: the table stays here")
	at = at.Add(100 * time.Millisecond)
	s.claim("Worker-P1", at, 2*time.Second)
	w.pollAt(at.Add(10 * time.Millisecond))
	if w.m.outbox.Offset != 0 {
		t.Fatalf("the watch moved a table the user scrolled: offset %d", w.m.outbox.Offset)
	}
	// Back down to the work (end shows it): following again.
	w.press("end")
	w.must("following the work")
	if row := w.line(" PAY-046 "); !strings.Contains(row, "Processing") {
		t.Fatalf("PAY-046 after end: %q", row)
	}
}

// A lease that runs out and a reclaim stay on screen for a few seconds, told from successive
// reads: the watch sees rows, not events.
func TestWatchTellsWhatHappenedBetweenReads(t *testing.T) {
	s := newShared(t, 6)
	w := newWatcher(t, s.db, 120, 40)
	t0 := watchT0.Add(100 * time.Millisecond)
	s.claim("Worker-P2", t0, time.Second) // PAY-001; then P2 dies
	w.pollAt(t0.Add(10 * time.Millisecond))
	w.must("PAY-001 claimed by Worker-P2, v1, lease until 10:00:01.100Z")
	w.pollAt(t0.Add(1100 * time.Millisecond))
	w.must("PAY-001 lease ended (Worker-P2 held it, did not finish) → EXPIRED, free to reclaim")
	s.claim("Worker-P1", t0.Add(1200*time.Millisecond), 2*time.Second) // the oldest claimable row: PAY-001
	w.pollAt(t0.Add(1300 * time.Millisecond))
	want := "10:00:01.400Z PAY-001 lease ended (Worker-P2 held it) → reclaimed by Worker-P1, v2"
	w.must(want)
	// Still there a few seconds on, with nothing else happening; gone after notableFor.
	w.pollAt(t0.Add(5 * time.Second))
	w.must(want)
	w.pollAt(t0.Add(1300*time.Millisecond + notableFor))
	if strings.Contains(w.m.View(), "reclaimed by Worker-P1") {
		t.Fatalf("the reclaim is still shown %s later", notableFor)
	}
}

func TestRecentLogKeepsTheNotableOnes(t *testing.T) {
	var l recentLog
	l.add(watchT0, []happening{{at: watchT0, text: "reclaim", notable: true}})
	for i := 1; i <= 5; i++ {
		at := watchT0.Add(time.Duration(i) * 100 * time.Millisecond)
		l.add(at, []happening{{at: at, text: fmt.Sprint("claim ", i)}})
	}
	got := l.shown(3)
	if len(got) != 3 || got[0].text != "reclaim" || got[2].text != "claim 5" {
		t.Fatalf("shown: %+v", got)
	}
}
