package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/store"
)

// rebuilder opens sessions of one scenario on one database file, re-creating the file each
// time and closing the session before, as the lab's Config.Open does.
type rebuilder struct {
	t    testing.TB
	name string
	path string
	sess *engine.Session
	db   *store.DB
	n    int // sessions opened
}

func newRebuilder(t testing.TB, name string) *rebuilder {
	r := &rebuilder{t: t, name: name, path: filepath.Join(t.TempDir(), "lab.db")}
	t.Cleanup(r.close)
	return r
}

// openHistory opens a session of the built-in scenario name on a fresh database and starts its
// history, which rebuilds it on the same file.
func openHistory(t testing.TB, name string) (*engine.Session, *engine.History, *rebuilder) {
	r := newRebuilder(t, name)
	s, err := r.open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s, engine.NewHistory(s, r.open), r
}

func (r *rebuilder) close() {
	if r.sess != nil {
		r.sess.Close()
		r.db.Close()
		r.sess = nil
	}
}

func (r *rebuilder) open(ctx context.Context) (*engine.Session, error) {
	r.close()
	db, err := store.Create(ctx, r.path)
	if err != nil {
		return nil, err
	}
	s, err := engine.NewSession(ctx, loadScenario(r.t, r.name, ""), db)
	if err != nil {
		db.Close()
		return nil, err
	}
	r.sess, r.db, r.n = s, db, r.n+1
	return s, nil
}

// picture is everything the lab shows of a session, read from the database and the engine:
// every row, the counts, the ledgers, the events, the workers and the clock.
func picture(t testing.TB, s *engine.Session) string {
	t.Helper()
	ctx := context.Background()
	rows, err := s.DB().Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.Summarize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sum.Database = ""
	var b strings.Builder
	fmt.Fprintf(&b, "clock %s settings %+v\n", engine.FormatClock(s.Clock().Now()), s.Settings())
	for _, r := range rows {
		fmt.Fprintf(&b, "%+v\n", r)
	}
	fmt.Fprintf(&b, "%+v\n%+v\n", *sum, s.Ledger().Total())
	for _, e := range s.Ledger().Events() {
		fmt.Fprintf(&b, "%d %s %s\n", e.Seq, e, e.Outcome)
	}
	for _, w := range s.Workers() {
		fmt.Fprintf(&b, "%+v %+v\n", w.View(), s.Ledger().Worker(w.Name))
	}
	line, idx, total := s.Script().Position()
	fmt.Fprintf(&b, "script %d %d/%d actions %d\n", line, idx, total, s.Crew().Actions())
	return b.String()
}

// do does command c on h's session and records it.
func do(t testing.TB, h *engine.History, c engine.Command) {
	t.Helper()
	p := h.Begin()
	r, err := h.Session().Do(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	h.Commit(c, p, r.Acted)
}

// TestHistoryBackThenForward steps stale-owner through its script with a crash and a clock move
// of the user's mixed in, then goes back N steps (for every N) and forward again: every position
// must show the same rows, ledgers and events as the first time, byte for byte.
func TestHistoryBackThenForward(t *testing.T) {
	ctx := context.Background()
	s, h, r := openHistory(t, "stale-owner")
	pics := []string{picture(t, s)}
	moves := []engine.Command{engine.CmdNext{}, engine.CmdNext{}, engine.CmdClock{Delta: 100e6},
		engine.CmdNext{}, engine.CmdToggle{Name: engine.ToggleFencing}}
	for i := 0; i < 20; i++ {
		var m engine.Command = engine.CmdNext{}
		if i < len(moves) {
			m = moves[i]
		}
		do(t, h, m)
		if h.Pos() == len(pics)-1 {
			break // nothing happened: the script is over
		}
		pics = append(pics, picture(t, h.Session()))
	}
	end := h.Pos()
	if end < 8 {
		t.Fatalf("only %d moves recorded", end)
	}
	for n := 1; n <= end; n++ {
		s, err := h.Goto(ctx, end-n)
		if err != nil {
			t.Fatal(err)
		}
		if got := picture(t, s); got != pics[end-n] {
			t.Fatalf("%d steps back: the database is not as it was:\n%s\nwant\n%s", n, got, pics[end-n])
		}
		if s, err = h.Goto(ctx, end); err != nil {
			t.Fatal(err)
		}
		if got := picture(t, s); got != pics[end] {
			t.Fatalf("%d steps back and forward again: not as it was:\n%s\nwant\n%s", n, got, pics[end])
		}
	}
	if h.Len() != end || r.n != end+1 {
		t.Fatalf("history %d moves, %d sessions opened; want %d and %d", h.Len(), r.n, end, end+1)
	}
}

// TestHistoryNewFuture: after going back, the recorded next move keeps the future; another
// move drops it.
func TestHistoryNewFuture(t *testing.T) {
	ctx := context.Background()
	r := newRebuilder(t, "after")
	s, _ := r.open(ctx)
	h := engine.NewHistory(s, r.open)
	for i := 0; i < 3; i++ { // phase, A claim PAY-001, A crash
		do(t, h, engine.CmdNext{})
	}
	if _, err := h.Goto(ctx, 1); err != nil {
		t.Fatal(err)
	}
	do(t, h, engine.CmdNext{}) // the same claim: the future stays
	if h.Pos() != 2 || h.Len() != 3 || h.Dropped() != 0 {
		t.Fatalf("the same move: pos %d len %d dropped %d, want 2 3 0", h.Pos(), h.Len(), h.Dropped())
	}
	do(t, h, engine.CmdClock{Delta: 100e6}) // not the crash: a new future
	if h.Pos() != 3 || h.Len() != 3 || h.Dropped() != 1 {
		t.Fatalf("another move: pos %d len %d dropped %d, want 3 3 1", h.Pos(), h.Len(), h.Dropped())
	}
}

// TestHistoryConcurrentPhase: the concurrent phase is recorded as not replayable; going back
// past it is refused with a clear error, going back to before it works.
func TestHistoryConcurrentPhase(t *testing.T) {
	ctx := context.Background()
	r := newRebuilder(t, "after")
	s, _ := r.open(ctx)
	h := engine.NewHistory(s, r.open)
	for h.Len() < 7 { // phase, claim, crash, restart, phase, concurrent, phase
		do(t, h, engine.CmdNext{})
	}
	e := h.Entries()[5]
	if e.Exact || e.Mark != '~' {
		t.Fatalf("the concurrent step: exact %v mark %q", e.Exact, e.Mark)
	}
	if _, err := h.Goto(ctx, 6); !errors.Is(err, engine.ErrNotReplayable) || !strings.Contains(err.Error(), "step 6") {
		t.Fatalf("back past the concurrent phase: %v", err)
	}
	if h.Pos() != 7 {
		t.Fatalf("a refused Goto moved the position to %d", h.Pos())
	}
	s, err := h.Goto(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, idx, _ := s.Script().Position(); idx != 5 {
		t.Fatalf("back to step 5: script at %d", idx)
	}
	if _, err := h.Goto(ctx, 6); !errors.Is(err, engine.ErrNotReplayable) {
		t.Fatalf("forward through the concurrent phase: %v", err)
	}
}

// BenchmarkHistoryReplay100 rebuilds the database after 100 steps of a six-message scenario
// (the playground: a fresh file, the seed, and 100 recorded moves replayed).
func BenchmarkHistoryReplay100(b *testing.B) {
	ctx := context.Background()
	_, h, _ := openHistory(b, "playground")
	for i := 0; h.Len() < 100; i++ {
		var m engine.Command = engine.CmdNext{}
		switch {
		case i%7 == 3:
			m = engine.CmdCrash{Worker: (i / 7) % 2}
		case i%7 == 4:
			m = engine.CmdRestart{Worker: (i / 7) % 2}
		case i%7 == 5:
			m = engine.CmdClock{Delta: 300e6}
		}
		do(b, h, m)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Goto(ctx, 0); err != nil {
			b.Fatal(err)
		}
		if _, err := h.Goto(ctx, 100); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHistoryFreeRun: a free run is recorded as not replayable: back to before it works, forward
// through it is refused.
func TestHistoryFreeRun(t *testing.T) {
	ctx := context.Background()
	r := newRebuilder(t, "playground")
	s, _ := r.open(ctx)
	h := engine.NewHistory(s, r.open)
	do(t, h, engine.CmdNext{})
	p := h.Begin()
	f := s.StartFree(ctx, 0, nil)
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	h.Commit(engine.CmdFree{}, p, true)
	do(t, h, engine.CmdClock{Delta: 100e6})
	if e := h.Entries()[1]; e.Exact || e.Mark != '~' {
		t.Fatalf("the free run: %+v", e)
	}
	if _, err := h.Goto(ctx, 2); !errors.Is(err, engine.ErrNotReplayable) {
		t.Fatalf("back to just after the free run: %v", err)
	}
	s, err := h.Goto(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Ledger().EventCount(); n != 1 {
		t.Fatalf("before the free run: %d events, want the one claim", n)
	}
	if _, err := h.Goto(ctx, 2); !errors.Is(err, engine.ErrNotReplayable) || !strings.Contains(err.Error(), "recorded future ends before it") {
		t.Fatalf("forward through the free run: %v", err)
	}
}
