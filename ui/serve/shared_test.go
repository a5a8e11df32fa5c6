package serve

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"leaselab/engine"
	"leaselab/engine/room"
)

// A screen that does not take its frames (a client that stopped reading blocks its program,
// and so its Send) never holds up the room: post returns at once, and the screen gets the
// latest frame when it takes one again, not every frame it missed.
func TestMailboxKeepsTheLatest(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []uint64
	b := &mailbox{send: func(f *room.Frame) {
		<-release
		mu.Lock()
		got = append(got, f.Seq)
		mu.Unlock()
	}}
	start := time.Now()
	for i := 1; i <= 10000; i++ {
		b.post(&room.Frame{Seq: uint64(i)})
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("10,000 posts to a screen that takes none took %s", d)
	}
	close(release)
	if !pollFor(2*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 && got[len(got)-1] == 10000 }) {
		t.Fatalf("the screen got %v, want the latest frame last", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) > 2 {
		t.Fatalf("the screen got %d frames (%v…), want the one in flight and the latest", len(got), got[:3])
	}
}

func pollFor(within time.Duration, cond func() bool) bool {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// roomFrame is a frame of a busy room: 30 attendees, 50 rows, names with escapes.
func roomFrame() *room.Frame {
	t0 := engine.Epoch
	f := &room.Frame{Seq: 7, Round: 1, Scenario: "playground", Messages: 50, ProviderCalls: 14, Now: t0,
		Settings: engine.DefaultSettings()}
	f.Settings.Leasing = true
	for i := range 30 {
		name := fmt.Sprintf("user%02d", i)
		if i == 3 {
			name = room.CleanName("evil\x1b]0;pwned\x07\u202e")
		}
		f.Seats = append(f.Seats, room.SeatView{Name: name, Present: i%7 != 0, Away: room.AwayDisconnected, Worker: name,
			State: "claimed PAY-001", Holding: "PAY-001", Version: 1, Claims: i, Processed: i, Keys: []string{"PAY-001"}, Answer: -1})
	}
	for i := range 50 {
		f.Rows = append(f.Rows, engine.Row{ID: int64(i + 1), IdempotencyKey: fmt.Sprintf("PAY-%03d", i+1), Status: engine.StatusProcessing,
			LockedBy: "evil\x1b[31m" + f.Seats[i%30].Name, LockedUntil: t0.Add(500 * time.Millisecond), LeaseVersion: 1})
	}
	f.Rows[5].LockedBy = "user05"
	f.Ledger.Duplicates = []room.Duplicate{{Key: "PAY-003", Seats: []string{"user01", "user02"}, AtOnce: true, Cause: "leasing off"}}
	f.Question = &room.QuestionView{N: 1, Text: "Who?", Answers: []string{"a", "b", "both"}, Counts: []int{1, 0, 4}, Open: true, Right: -1}
	f.Judge(&engine.Summary{Verdict: "FAIL", Checks: []engine.Check{{Name: "one owner", Decides: true}}})
	return f
}

// Every screen of the room fits its window, at every size, and prints no escape sequence that
// came from a name or a row.
func TestSharedScreensFit(t *testing.T) {
	r := lipgloss.NewRenderer(&bytes.Buffer{}, termenv.WithProfile(termenv.Ascii))
	st := newRoomStyles(r, "")
	f := roomFrame()
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 16}, {40, 10}, {500, 200}, {0, 0}} {
		seat := &seatModel{seat: nil, st: st, keys: newSeatKeys(), status: "you: user05 claimed PAY-006"}
		teacher := &roomTeacher{st: st, keys: newTeacherKeys(roomToggles(false)), sel: 3, sr: &sharedRoom{s: &Server{}}}
		screens := map[string]tea.Model{"teacher": teacher}
		if size[0] >= 60 {
			screens["seat"] = seatOf(seat, "user05")
		}
		for who, m := range screens {
			m, _ = m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			m, _ = m.Update(frameMsg{f})
			v := m.View()
			w, h := screenSize(size[0], size[1])
			lines := strings.Split(v, "\n")
			if len(lines) > h {
				t.Errorf("%s at %v: %d lines", who, size, len(lines))
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > w {
					t.Errorf("%s at %v: a line of %d cells: %q", who, size, ansi.StringWidth(l), l)
				}
			}
			if strings.ContainsAny(v, "\x1b\x07\u202e") {
				t.Errorf("%s at %v: a raw escape on screen", who, size)
			}
			if size == [2]int{120, 40} && who == "seat" && (!strings.Contains(v, "[your actions: 0]") || !strings.Contains(v, "▶    6 PAY-006")) {
				t.Errorf("the seat's screen misses its counter or its own row:\n%s", v)
			}
		}
	}
}

// seatOf is m as the screen of the seat named name.
func seatOf(m *seatModel, name string) *seatModel {
	m.name = name
	return m
}
