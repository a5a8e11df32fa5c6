package room_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/room"
	"leaselab/engine/scenario"
	"leaselab/store"
)

// newRoom opens a room on the playground (messages of them) on a real SQLite file of the
// test's, with the fair write-lock queue, as `serve --shared` does.
func newRoom(t *testing.T, messages int) (*room.Room, string) {
	t.Helper()
	data, source, err := assets.Load("playground", scenario.MaxScenarioSize)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse(source, data)
	if err != nil {
		t.Fatal(err)
	}
	if messages > 0 {
		sc.Messages = messages
	}
	path := filepath.Join(t.TempDir(), "room.db")
	var closeLast func() error
	made := false
	r, err := room.New(context.Background(), room.Config{
		Open: func(ctx context.Context) (*engine.Session, error) {
			if closeLast != nil {
				closeLast()
			}
			db, err := store.Files{}.Create(ctx, path, made, true)
			if err != nil {
				return nil, err
			}
			made = true
			s, err := engine.NewSession(ctx, room.ForRoom(sc), db)
			if err != nil {
				db.Close()
				return nil, err
			}
			closeLast = func() error { return errors.Join(s.Close(), db.Close()) }
			return s, nil
		},
		Close: func() error { return closeLast() },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, path
}

// step presses space for seat and fails the test on an error or when nothing happened.
func step(t *testing.T, s *room.Seat) engine.Event {
	t.Helper()
	res, err := s.Step(context.Background())
	if err != nil || !res.Acted {
		t.Fatalf("%s's step: %+v, %v", s.Name(), res, err)
	}
	return res.Event
}

func frame(t *testing.T, r *room.Room) *room.Frame {
	t.Helper()
	f, err := r.Frame(context.Background(), room.FrameOptions{Summary: true, Events: 5})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func row(t *testing.T, f *room.Frame, key string) engine.Row {
	t.Helper()
	for _, r := range f.Rows {
		if r.IdempotencyKey == key {
			return r
		}
	}
	t.Fatalf("no row %s", key)
	return engine.Row{}
}

// The walk: each attendee claims and finalizes a message under their own name; one
// leaves holding a lease, their row stays Processing under their name until the clock moves,
// another reclaims it at lease version 2, and the one who came back finds their stale finalize
// refused; then leasing off for the room has two attendees process the same row.
func TestRoomWalk(t *testing.T) {
	ctx := context.Background()
	r, _ := newRoom(t, 6)
	ana, err := r.Join(ctx, "ana")
	if err != nil {
		t.Fatal(err)
	}
	ben, _ := r.Join(ctx, "ben")
	carl, _ := r.Join(ctx, "carl")
	for _, s := range []*room.Seat{ana, ben, carl} {
		if ev := step(t, s); ev.Kind != engine.EvClaim || ev.ID != s.Name() {
			t.Fatalf("%s's first step: %s", s.Name(), ev.Text)
		}
	}
	for _, s := range []*room.Seat{ben, carl} {
		step(t, s) // the provider call
		if ev := step(t, s); ev.Kind != engine.EvFinalize || ev.Outcome != engine.OutcomeCommitted {
			t.Fatalf("%s's finalize: %s", s.Name(), ev.Text)
		}
	}
	f := frame(t, r)
	for key, who := range map[string]string{"PAY-002": "ben", "PAY-003": "carl"} {
		if got := row(t, f, key); got.Status != engine.StatusProcessed || got.LockedBy != who {
			t.Fatalf("%s: %s by %s, want Processed by %s", key, got.Status, got.LockedBy, who)
		}
	}
	step(t, ana) // ana calls the provider for PAY-001, then her connection drops
	ana.Leave(room.AwayDisconnected)
	f = frame(t, r)
	if got := row(t, f, "PAY-001"); got.Status != engine.StatusProcessing || got.LockedBy != "ana" || got.LeaseVersion != 1 {
		t.Fatalf("PAY-001 after ana left: %+v", got)
	}
	if _, err := ana.Step(ctx); !errors.Is(err, room.ErrAway) {
		t.Fatalf("an away attendee's step: %v", err)
	}
	// ben's claims take the free rows, none of ana's while her lease lives.
	for range 3 {
		step(t, ben)
		step(t, ben)
		step(t, ben)
	}
	if ev := step(t, ben); ev.Outcome != engine.OutcomeBlocked || ev.Key != "PAY-001" {
		t.Fatalf("ben's claim under ana's live lease: %s", ev.Text)
	}
	if _, err := r.PastLease(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := step(t, ben); ev.Outcome != engine.OutcomeReclaimed || ev.Key != "PAY-001" || ev.Version != 2 || ev.PriorOwner != "ana" {
		t.Fatalf("ben's claim after the clock moved: %s", ev.Text)
	}
	step(t, ben) // ben calls the provider for PAY-001
	if err := ana.Back(ctx); err != nil {
		t.Fatal(err)
	}
	f = frame(t, r)
	me, _ := f.Mine("ana")
	if me.Worker != "ana#2" || me.StaleWorker != "ana" || me.StaleHolding != "PAY-001" || me.StaleVersion != 1 {
		t.Fatalf("ana back: %+v", me)
	}
	res, err := ana.Finish(ctx)
	if err != nil || res.Event.Kind != engine.EvFinalize || res.Event.Outcome != engine.OutcomeRejected {
		t.Fatalf("ana's stale finalize: %+v, %v", res.Event, err)
	}
	if _, err := ana.Finish(ctx); !errors.Is(err, room.ErrNoStale) {
		t.Fatalf("a second Finish: %v", err)
	}
	f = frame(t, r)
	if f.Ledger.NRefused != 1 || f.Ledger.NReclaims != 1 || f.Ledger.NViolations != 0 {
		t.Fatalf("ledger: %+v", f.Ledger)
	}
	board := strings.Join(append([]string{f.Board.Headline}, f.Board.Lines...), "\n")
	for _, want := range []string{
		"PAY-001: ana's worker crashed holding it (connection dropped) and its lease ran out; ben reclaimed it (lease version 2)",
		"ana's stale finalize of PAY-001 (lease version 1) was refused by the ownership check: ben held it (lease version 2)",
		"PAY-001 was processed by ana and ben, one after the other",
	} {
		if !strings.Contains(board, want) {
			t.Errorf("the scoreboard misses %q:\n%s", want, board)
		}
	}

	// Reset, leasing off: ana and ben both load PAY-001 and process it.
	if err := r.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Toggle(ctx, engine.ToggleLeasing); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*room.Seat{ana, ben} {
		if ev := step(t, s); ev.Kind != engine.EvLoad {
			t.Fatalf("%s with leasing off: %s", s.Name(), ev.Text)
		}
		step(t, s) // the provider call for PAY-001
	}
	f = frame(t, r)
	if len(f.Ledger.Duplicates) != 1 || f.Ledger.Duplicates[0].Key != "PAY-001" {
		t.Fatalf("duplicates: %+v", f.Ledger.Duplicates)
	}
	if want := "6 messages, 2 provider calls: PAY-001 was processed by ana and ben at once (leasing off)"; f.Board.Headline != want {
		t.Fatalf("headline %q, want %q", f.Board.Headline, want)
	}
	if f.Round != 2 {
		t.Fatalf("round %d after a reset", f.Round)
	}
}

// Names are escaped, bounded and unique among the present; a name whose attendee is away is a
// reconnection.
func TestRoomNames(t *testing.T) {
	ctx := context.Background()
	r, _ := newRoom(t, 3)
	a, _ := r.Join(ctx, "ana")
	b, _ := r.Join(ctx, "ana")
	evil, _ := r.Join(ctx, "\x1b[31mred#1\u202e"+strings.Repeat("x", 1000))
	empty, _ := r.Join(ctx, "  ")
	if a.Name() != "ana" || b.Name() != "ana-2" || empty.Name() != "attendee" {
		t.Fatalf("names %q %q %q", a.Name(), b.Name(), empty.Name())
	}
	if n := evil.Name(); strings.ContainsAny(n, "\x1b#\u202e") || len([]rune(n)) > room.MaxNameRunes {
		t.Fatalf("name %q", n)
	}
	a.Leave(room.AwayLeft)
	again, err := r.Join(ctx, "ana")
	if err != nil || again != a || !a.Present() {
		t.Fatalf("ana reconnecting: %v %v", again == a, err)
	}
}

// Thirty attendees stepping at once on one SQLite file: every one gets claims, and the room's
// ledgers agree with the engine's (run with -race in CI).
func TestRoomConcurrentSeats(t *testing.T) {
	ctx := context.Background()
	r, _ := newRoom(t, 200)
	var seats []*room.Seat
	for i := range 30 {
		s, err := r.Join(ctx, "a"+string(rune('a'+i%26))+string(rune('0'+i/26)))
		if err != nil {
			t.Fatal(err)
		}
		seats = append(seats, s)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(seats))
	for _, s := range seats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 15 {
				if _, err := s.Step(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { // frames alongside, as the screens read them
		for {
			select {
			case <-done:
				return
			default:
				r.Frame(ctx, room.FrameOptions{})
				time.Sleep(5 * time.Millisecond)
			}
		}
	}()
	wg.Wait()
	close(done)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f := frame(t, r)
	for _, s := range f.Seats {
		if s.Claims != 5 || s.Finalized != 5 {
			t.Errorf("%s: %d claims, %d finalized, want 5 and 5", s.Name, s.Claims, s.Finalized)
		}
	}
	if f.Counts.Processed != 150 || len(f.Ledger.Duplicates)+len(f.Ledger.Again) != 0 || !f.Board.Passed || f.Board.Fails > 0 {
		for _, c := range f.Summary.Checks {
			t.Logf("%v %s: %s", c.OK, c.Name, c.Detail)
		}
		t.Fatalf("%d processed, duplicates %v, verdict %q", f.Counts.Processed, f.Ledger.Duplicates, f.Board.Verdict)
	}
}

// The fencing lesson by hand: ana leaves holding PAY-001, ben reclaims it and crashes, and
// ana's fresh worker reclaims it again under the same name (lease version 3). Her old worker's
// finalize then passes the ownership check (LockedBy is still ana): an ownership violation with
// fencing off, refused with fencing on.
func TestRoomFencing(t *testing.T) {
	ctx := context.Background()
	r, _ := newRoom(t, 6)
	ana, _ := r.Join(ctx, "ana")
	ben, _ := r.Join(ctx, "ben")
	for _, fencing := range []bool{false, true} {
		if fencing {
			if err := r.Reset(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Toggle(ctx, engine.ToggleFencing); err != nil {
				t.Fatal(err)
			}
		}
		step(t, ana) // claims PAY-001
		step(t, ana) // calls the provider
		ana.Leave(room.AwayDisconnected)
		if _, err := r.PastLease(ctx); err != nil {
			t.Fatal(err)
		}
		if ev := step(t, ben); ev.Outcome != engine.OutcomeReclaimed || ev.Version != 2 {
			t.Fatalf("ben's reclaim: %s", ev.Text)
		}
		if _, err := r.Crash("ben"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.PastLease(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ana.Back(ctx); err != nil {
			t.Fatal(err)
		}
		if ev := step(t, ana); ev.Outcome != engine.OutcomeReclaimed || ev.Version != 3 || ev.ID != "ana" {
			t.Fatalf("ana#2's reclaim: %s", ev.Text)
		}
		res, err := ana.Finish(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f := frame(t, r)
		want, outcome := "ana's finalize of PAY-001 (lease version 1) wrote over ana's lease version 3 (fencing off: the same name, an older lease version)", engine.OutcomeViolation
		if fencing {
			want, outcome = "ana's stale finalize of PAY-001 (lease version 1) was refused by fencing: the row is at lease version 3 now", engine.OutcomeRejected
		}
		board := strings.Join(append([]string{f.Board.Headline}, f.Board.Lines...), "\n")
		if res.Event.Outcome != outcome || !strings.Contains(board, want) {
			t.Fatalf("fencing %v: the old finalize %s; the board:\n%s", fencing, res.Event.Text, board)
		}
	}
}
