package ui

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"

	"leaselab/engine"
	"leaselab/store"
	"leaselab/ui/common"
)

// watchT0 is the wall-clock time the watch tests start at.
var watchT0 = time.Date(2026, time.March, 2, 10, 0, 0, 0, time.UTC)

// shared is a database that worker processes would share, driven by hand: real store
// connections claim and finalize with the times a test gives them.
type shared struct {
	tb    testing.TB
	db    *store.DB
	conns map[string]engine.Conn
}

// newShared seeds n payments, as leaselab seed does.
func newShared(tb testing.TB, n int) *shared {
	tb.Helper()
	ctx := context.Background()
	db, err := store.Create(ctx, filepath.Join(tb.TempDir(), "shared.db"))
	if err != nil {
		tb.Fatal(err)
	}
	s := &shared{tb: tb, db: db, conns: map[string]engine.Conn{}}
	tb.Cleanup(func() {
		for _, c := range s.conns {
			c.Close()
		}
		db.Close()
	})
	if err := engine.Seed(ctx, engine.NewGateway(db), n, watchT0); err != nil {
		tb.Fatal(err)
	}
	return s
}

// claim has worker claim the oldest claimable row at at, under a lease of lease.
func (s *shared) claim(worker string, at time.Time, lease time.Duration) engine.Message {
	s.tb.Helper()
	ctx := context.Background()
	c := s.conns[worker]
	if c == nil {
		var err error
		if c, err = s.db.Connect(ctx); err != nil {
			s.tb.Fatal(err)
		}
		s.conns[worker] = c
	}
	res, err := c.Claim(ctx, engine.ClaimRequest{Worker: worker, Now: at, Until: at.Add(lease)})
	if err != nil || res.Outcome != engine.ClaimWon {
		s.tb.Fatalf("%s claim at %s: %v, %v", worker, at, res.Outcome, err)
	}
	return res.Message
}

// finalize has worker write Paid for msg at at.
func (s *shared) finalize(worker string, msg engine.Message, at time.Time) {
	s.tb.Helper()
	res, err := s.conns[worker].Finalize(context.Background(), engine.FinalizeRequest{Worker: worker, Message: msg, Now: at,
		PaymentStatus: engine.PaymentPaid, TransactionID: "txn_" + msg.IdempotencyKey, OwnershipCheck: true})
	if err != nil || !res.Committed {
		s.tb.Fatalf("%s finalize %s: committed %v, %v", worker, msg.IdempotencyKey, res.Committed, err)
	}
}

// watcher drives the watch synchronously, as the lab harness does; the wall clock is now.
type watcher struct {
	tb    testing.TB
	m     watchModel
	now   time.Time
	ticks []watchTick
	quit  bool
}

func newWatcher(tb testing.TB, db WatchDB, w, h int) *watcher {
	tb.Helper()
	wt := &watcher{tb: tb, now: watchT0}
	cfg := WatchConfig{DB: db, Path: "/tmp/leaselab/shared.db", Now: func() time.Time { return wt.now }}
	wt.m = newWatch(context.Background(), cfg, common.DefaultStyles(lipgloss.DefaultRenderer()))
	wt.m.after = atOnce
	sized(w, h, wt.send)
	wt.run(wt.m.Init())
	return wt
}

func (w *watcher) send(msg tea.Msg) {
	w.tb.Helper()
	w.run(updated(&w.m, msg, watchModel.update))
}

func (w *watcher) run(cmd tea.Cmd) {
	w.tb.Helper()
	runCmd(cmd, func(msg tea.Msg) {
		switch msg := msg.(type) {
		case tea.QuitMsg:
			w.quit = true
		case watchTick:
			w.ticks = append(w.ticks, msg)
		default:
			w.send(msg)
		}
	})
}

// pollAt moves the wall clock to at and delivers the waiting tick: one read of the database.
func (w *watcher) pollAt(at time.Time) {
	w.tb.Helper()
	w.now = at
	if len(w.ticks) == 0 {
		w.tb.Fatal("no poll tick waiting")
	}
	t := w.ticks[0]
	w.ticks = w.ticks[1:]
	w.send(t)
}

func (w *watcher) press(keys ...string) {
	w.tb.Helper()
	for _, k := range keys {
		w.send(keyMsg(k))
	}
}

func (w *watcher) must(want ...string) {
	w.tb.Helper()
	v := w.m.View()
	for _, s := range want {
		if !strings.Contains(v, s) {
			w.tb.Fatalf("watch screen lacks %q:\n%s", s, v)
		}
	}
}

// line is the screen line that contains s.
func (w *watcher) line(s string) string {
	w.tb.Helper()
	for _, l := range strings.Split(w.m.View(), "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	w.tb.Fatalf("no line with %q:\n%s", s, w.m.View())
	return ""
}

// workshopMoment is three worker processes at work: P1 finalized PAY-001 and holds PAY-002, P2
// claimed PAY-003 and died (its lease has expired by the second read), P3 finalized PAY-004
// between the two reads.
func workshopMoment(tb testing.TB) (*shared, *watcher) {
	s := newShared(tb, 6)
	m := s.claim("Worker-P1", watchT0, 2*time.Second)
	s.finalize("Worker-P1", m, watchT0.Add(50*time.Millisecond))
	s.claim("Worker-P1", watchT0.Add(100*time.Millisecond), 2*time.Second)
	s.claim("Worker-P2", watchT0.Add(200*time.Millisecond), time.Second)
	w := newWatcher(tb, s.db, 120, 40)
	w.pollAt(watchT0.Add(300 * time.Millisecond))
	m = s.claim("Worker-P3", watchT0.Add(400*time.Millisecond), 2*time.Second)
	s.finalize("Worker-P3", m, watchT0.Add(500*time.Millisecond))
	w.pollAt(watchT0.Add(1500 * time.Millisecond))
	return s, w
}

func TestWatchGolden(t *testing.T) {
	_, w := workshopMoment(t)
	v := w.m.View()
	checkSize(t, v, 120, 40)
	golden.RequireEqual(t, []byte(v))
}

func TestWatchShowsTheSharedDatabase(t *testing.T) {
	_, w := workshopMoment(t)
	w.must("WATCH (read-only)", "db /tmp/leaselab/shared.db",
		"outbox Pending 2 · Processing 2 · Processed 2 of 6", "payments Paid 2 · Failed 0 · Pending 4",
		"wall clock 10:00:01.500Z", "rate 0.7 rows/s (last 5s)") // 1 more row in 1.5 s since the first read
	// PAY-002: P1's lease runs to 10:00:02.100Z, 600 ms left of about two seconds.
	row := w.line(" PAY-002 ")
	for _, want := range []string{"Processing", "Worker-P1", "10:00:02.100Z", "███░░░░░░░ 600ms"} {
		if !strings.Contains(row, want) {
			t.Fatalf("PAY-002 row lacks %q: %q", want, row)
		}
	}
	// PAY-003: P2 died holding it; its lease ended at 10:00:01.200Z.
	row = w.line(" PAY-003 ")
	if !strings.Contains(row, "Worker-P2") || !strings.Contains(row, "EXPIRED") {
		t.Fatalf("PAY-003 row: %q", row)
	}
	if row := w.line(" PAY-004 "); !strings.Contains(row, "Processed") || !strings.Contains(row, "10:00:00.500Z") {
		t.Fatalf("PAY-004 row: %q", row)
	}
	// Who holds what, by LockedBy.
	for name, want := range map[string]string{
		"  Worker-P1": "holds PAY-002 (lease 600ms left) · processed 1",
		"  Worker-P2": "EXPIRED PAY-003",
		"  Worker-P3": "holds nothing · processed 1",
	} {
		if l := w.line(name + "  "); !strings.Contains(l, want) {
			t.Fatalf("holder line %q lacks %q", l, want)
		}
	}
}

func TestWatchFollowsTheWallClock(t *testing.T) {
	_, w := workshopMoment(t)
	w.pollAt(watchT0.Add(2200 * time.Millisecond))
	if row := w.line(" PAY-002 "); !strings.Contains(row, "EXPIRED") {
		t.Fatalf("PAY-002 not EXPIRED once the wall clock passed its lease: %q", row)
	}
	w.must("wall clock 10:00:02.200Z")
}

func TestWatchPauseKeepsOneLoop(t *testing.T) {
	s, w := workshopMoment(t)
	reads := w.m.polls
	w.press("p")
	w.must("polling PAUSED", "polling paused")
	for len(w.ticks) > 0 { // the paused loop's tick reads nothing
		w.pollAt(watchT0.Add(1600 * time.Millisecond))
	}
	if w.m.polls != reads {
		t.Fatal("a read happened while paused")
	}
	s.claim("Worker-P3", watchT0.Add(1700*time.Millisecond), 2*time.Second)
	w.now = watchT0.Add(1800 * time.Millisecond)
	w.press("p") // resumes: one read at once, then one tick waiting
	if w.m.polls != reads+1 || len(w.ticks) != 1 {
		t.Fatalf("after resuming: %d reads (want %d), %d ticks waiting (want 1)", w.m.polls, reads+1, len(w.ticks))
	}
	w.must("polling every 200ms")
	if row := w.line(" PAY-003 "); !strings.Contains(row, "Worker-P3") || !strings.Contains(row, "10:00:03.700Z") {
		t.Fatalf("after resuming, P3's reclaim of PAY-003 does not show: %q", row)
	}
	w.send(watchTick{id: w.m.id - 1})
	w.send(watchedMsg{id: w.m.id - 1, at: watchT0})
	if w.m.polls != reads+1 {
		t.Fatal("a stale tick or read was taken")
	}
}

func TestWatchKeys(t *testing.T) {
	s := newShared(t, 40)
	w := newWatcher(t, s.db, 80, 24)
	w.must("rows 1–", "PAY-001", "nobody has claimed a row yet")
	w.press("end")
	w.must("PAY-040")
	w.press("home", "down")
	if w.m.outbox.Offset != 1 {
		t.Fatalf("offset %d after home, down", w.m.outbox.Offset)
	}
	w.press("?")
	w.must("pause/resume polling", "first row")
	checkSize(t, w.m.View(), 80, 24)
	w.press("?")
	w.press("q")
	if !w.quit {
		t.Fatal("q did not quit")
	}
	w2 := newWatcher(t, s.db, 60, 20)
	w2.must("terminal too small")
	w2.press("ctrl+c")
	if !w2.quit {
		t.Fatal("ctrl+c did not quit")
	}
}

func TestWatchNeverExceedsTheWindow(t *testing.T) {
	_, w := workshopMoment(t)
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {200, 60}, {79, 24}, {20, 3}} {
		w.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		checkSize(t, w.m.View(), size[0], size[1])
	}
}

// failingDB fails its reads until told otherwise.
type failingDB struct {
	WatchDB
	fail bool
}

func (f *failingDB) Snapshot(ctx context.Context) ([]engine.Row, error) {
	if f.fail {
		return nil, errors.New("database is locked")
	}
	return f.WatchDB.Snapshot(ctx)
}

func TestWatchKeepsPollingThroughErrors(t *testing.T) {
	s := newShared(t, 6)
	db := &failingDB{WatchDB: s.db, fail: true}
	w := newWatcher(t, db, 120, 40)
	w.must("could not read the database (trying again every 200ms): database is locked")
	db.fail = false
	w.pollAt(watchT0.Add(200 * time.Millisecond))
	w.must("watching: other processes do the work", "Pending 6")
}

func TestWatchRunsAsAProgram(t *testing.T) {
	s := newShared(t, 6)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out strings.Builder
	err := Watch(ctx, WatchConfig{DB: s.db, Path: "shared.db", In: strings.NewReader("q"), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := Watch(ctx, WatchConfig{}); err == nil {
		t.Fatal("Watch without a database did not fail")
	}
}
