package share_test

import (
	"context"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/explore"
	"leaselab/engine/scenario"
	"leaselab/engine/share"
	"leaselab/store"
)

// opener opens sessions of one scenario text on fresh database files, closing the one before.
type opener struct {
	t    testing.TB
	name string
	src  []byte
	o    engine.Overrides
	n    int
	sess *engine.Session
	db   *store.DB
}

func (op *opener) close() {
	if op.sess != nil {
		op.sess.Close()
		op.db.Close()
		op.sess = nil
	}
}

func (op *opener) open(ctx context.Context) (*engine.Session, error) {
	op.close()
	sc, err := scenario.Parse(op.name, op.src)
	if err != nil {
		return nil, err
	}
	if err := sc.Apply(op.o); err != nil {
		return nil, err
	}
	op.n++
	db, err := store.Create(ctx, filepath.Join(op.t.TempDir(), "x.db"))
	if err != nil {
		return nil, err
	}
	s, err := engine.NewSession(ctx, sc, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	op.sess, op.db = s, db
	return s, nil
}

func newOpener(t testing.TB, name string, src []byte, o engine.Overrides) *opener {
	op := &opener{t: t, name: name, src: src, o: o}
	t.Cleanup(op.close)
	return op
}

// lessonSource is a built-in lesson's text.
func lessonSource(t testing.TB, name string) []byte {
	t.Helper()
	data, _, ok := assets.Scenario(name)
	if !ok {
		t.Fatalf("no lesson %s", name)
	}
	return data
}

// frameOf is s's frame without what differs between two databases of the same run (the path).
func frameOf(t testing.TB, s *engine.Session) *engine.Frame {
	t.Helper()
	f, err := s.Snapshot(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	f.DBPath = ""
	if f.Summary != nil {
		sum := *f.Summary
		sum.Database = ""
		f.Summary = &sum
	}
	return f
}

// aPersonsMoves are the moves of someone at the lab: steps, a crash, the clock, a restart, a
// worker stepped by hand, a toggle flipped mid-run, a pause.
var aPersonsMoves = []engine.Command{
	engine.CmdNext{}, engine.CmdNext{}, engine.CmdNext{}, engine.CmdCrash{Worker: 0}, engine.CmdClock{Delta: 100 * time.Millisecond},
	engine.CmdPastLease{}, engine.CmdNext{}, engine.CmdNext{}, engine.CmdRestart{Worker: 0}, engine.CmdStepWorker{Worker: 1},
	engine.CmdToggle{Name: engine.ToggleOwnershipCheck}, engine.CmdNext{}, engine.CmdNext{}, engine.CmdPause{Worker: 1},
	engine.CmdNext{}, engine.CmdNext{},
}

// TestRoundTripEveryLesson: for every built-in lesson, the code of a moment (a person's moves
// from the start, a toggle set as a flag) decodes to the same lesson, settings and moves, and
// a fresh session that replays them shows the same frame: rows, workers, ledgers, events,
// checks.
func TestRoundTripEveryLesson(t *testing.T) {
	ctx := context.Background()
	for _, name := range assets.Names() {
		t.Run(name, func(t *testing.T) {
			src := lessonSource(t, name)
			sc, err := scenario.Parse(name, src)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Backend != "" {
				t.Skipf("a %s lesson: its sessions need that database", sc.Backend)
			}
			seed := int64(7)
			o := engine.Overrides{Toggles: map[string]bool{engine.ToggleHeartbeat: !sc.Settings.Heartbeat}, Seed: &seed}
			orig := newOpener(t, name, src, o)
			s, err := orig.open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			h := engine.NewHistory(s, orig.open)
			for _, c := range aPersonsMoves {
				p := h.Begin()
				res, _ := h.Session().Do(ctx, c) // a move that is off now (a restart of no crashed worker) is refused, as in the lab
				h.Commit(c, p, res.Acted)
			}
			moves, all := share.MovesOf(h.Entries()[:h.Pos()])
			if !all { // a concurrent phase: the moment shared is the one before it
				if s, err = h.Goto(ctx, len(moves)); err != nil {
					t.Fatal(err)
				}
			}
			if len(moves) < 3 {
				t.Fatalf("only %d moves recorded", len(moves))
			}
			code, err := share.Encode(share.Code{Lesson: name, Overrides: o, Moves: moves})
			if err != nil {
				t.Fatal(err)
			}
			got, err := share.Decode(strings.ToLower(code)) // any case
			if err != nil {
				t.Fatalf("decode %s: %v", code, err)
			}
			if got.Lesson != name || got.File != nil || got.Found != nil || !reflect.DeepEqual(got.Overrides, o) || !reflect.DeepEqual(got.Moves, moves) {
				t.Fatalf("decoded %+v, want lesson %s, %+v, moves %v", got, name, o, moves)
			}
			want := frameOf(t, h.Session())
			again := newOpener(t, got.Lesson, lessonSource(t, got.Lesson), got.Overrides)
			s2, err := again.open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			h2 := engine.NewHistory(s2, again.open)
			if err := share.Replay(ctx, h2, got.Moves); err != nil {
				t.Fatal(err)
			}
			gotF := frameOf(t, h2.Session())
			gv, wv := reflect.ValueOf(*gotF), reflect.ValueOf(*want)
			for i := range gv.NumField() {
				if g, w := gv.Field(i).Interface(), wv.Field(i).Interface(); !reflect.DeepEqual(g, w) {
					t.Errorf("the replayed frame's %s differs from the moment's\n got %+v\nwant %+v", gv.Type().Field(i).Name, g, w)
				}
			}
			if h2.Pos() != h.Pos() && all {
				t.Errorf("the replay recorded %d moves, the moment %d", h2.Pos(), h.Pos())
			}
			t.Logf("%d moves, code of %d characters", len(moves), len(code))
		})
	}
}

// guardsOff are the counterexamples of docs/explore.md's table.
var guardsOff = []struct {
	lesson, toggle string
}{
	{"playground", engine.ToggleAtomicClaim},
	{"playground", engine.ToggleLeasing},
	{"playground", engine.ToggleOwnershipCheck},
	{"aba-fencing", engine.ToggleFencing},
	{"rescuer-race", engine.ToggleGuardedRescue},
	{"clock-skew", engine.ToggleDBClock},
}

// TestCounterexamplesRoundTrip: the code of each counterexample explore finds opens a session
// whose replay of the code's moves ends with the checks it broke failed; the playground's fits
// on a slide's line.
func TestCounterexamplesRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, g := range guardsOff {
		t.Run(g.lesson+"-"+g.toggle, func(t *testing.T) {
			src := lessonSource(t, g.lesson)
			o := engine.Overrides{Toggles: map[string]bool{g.toggle: false}}
			sc, err := scenario.Parse(g.lesson, src)
			if err != nil {
				t.Fatal(err)
			}
			if err := sc.Apply(o); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			db, err := store.Create(ctx, filepath.Join(dir, "x.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			res, err := explore.Run(ctx, explore.Config{Scenario: sc, DB: db, Bounds: explore.DefaultBounds(), TempDir: dir, Now: time.Now})
			if err != nil {
				t.Fatal(err)
			}
			if res.Violation == nil {
				t.Fatalf("explore found nothing")
			}
			code, err := share.Encode(share.Counterexample(g.lesson, nil, o, res.Violation))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d moves: %s (%d characters)", len(res.Violation.Schedule), code, len(code))
			if g.lesson == "playground" && len(code) > 64 {
				t.Errorf("the playground's code is %d characters, more than a slide's line (64)", len(code))
			}
			got, err := share.Decode(code)
			if err != nil {
				t.Fatal(err)
			}
			text, err := share.FoundScenario(got.Lesson, lessonSource(t, got.Lesson), got.Overrides, got.Found)
			if err != nil {
				t.Fatal(err)
			}
			op := newOpener(t, "found", text, got.Overrides)
			s, err := op.open(ctx)
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			h := engine.NewHistory(s, op.open)
			if err := share.Replay(ctx, h, got.Moves); err != nil {
				t.Fatal(err)
			}
			sum, err := h.Session().Summarize(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range got.Found.Checks {
				ok := true
				for _, c := range sum.Checks {
					if c.ID == id {
						ok = c.OK
					}
				}
				if ok {
					t.Errorf("after the replay, %s holds; the counterexample broke it\n%s", id, text)
				}
			}
			if !h.Session().Script().Done() {
				t.Errorf("the replay stopped before the schedule's end")
			}
		})
	}
}

// TestAFileTravelsWhole: a scenario file's text is carried compressed, and comes back byte for
// byte.
func TestAFileTravelsWhole(t *testing.T) {
	src := lessonSource(t, "stale-owner")
	code, err := share.Encode(share.Code{File: src, Moves: []engine.Command{engine.CmdNext{}, engine.CmdNext{}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := share.Decode(code)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.File) != string(src) || got.Lesson != "" || len(got.Moves) != 2 {
		t.Fatalf("got %q and %v", got.File, got.Moves)
	}
	if len(code) >= len(src) {
		t.Errorf("a code of %d characters for a file of %d bytes: not compressed", len(code), len(src))
	}
	t.Logf("a file of %d bytes: a code of %d characters", len(src), len(code))
}

// TestEveryMoveAndSettingTravels: every kind of move and setting comes back as it went.
func TestEveryMoveAndSettingTravels(t *testing.T) {
	seed, rate := int64(-3), 0.25
	var many []engine.Command
	for range 40 {
		many = append(many, engine.CmdNext{})
	}
	c := share.Code{Lesson: "dead-letter", Overrides: engine.Overrides{Workers: 3, Messages: 40, Lease: 750 * time.Millisecond,
		Seed: &seed, FailRate: &rate, MaxAttempts: 4, Skew: map[string]time.Duration{"B": 400 * time.Millisecond, "C": -time.Second},
		Toggles: map[string]bool{engine.ToggleBackoff: true, engine.ToggleLeasing: false, "a-toggle-of-later": true}},
		Moves: append(many, engine.CmdStepWorker{Worker: 2}, engine.CmdStepWorker{Worker: 40}, engine.CmdCrash{Worker: 1},
			engine.CmdRestart{Worker: 1}, engine.CmdPause{Worker: 0}, engine.CmdToggle{Name: engine.ToggleDeadLetter},
			engine.CmdToggle{Name: "a-toggle-of-later"}, engine.CmdClock{Delta: 300 * time.Millisecond}, engine.CmdPastLease{},
			engine.CmdFinish{}, engine.CmdFinish{}, engine.CmdRedrive{Key: "PAY-004"}, engine.CmdNext{})}
	code, err := share.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := share.Decode(code)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("got  %+v\nwant %+v", got, c)
	}
	if _, err := share.Encode(share.Code{Lesson: "playground", Moves: []engine.Command{engine.CmdNext{}, engine.CmdFree{}}}); !errors.Is(err, share.ErrCannotShare) {
		t.Errorf("a free run encoded: %v", err)
	}
}

// TestDamagedCodesAreRefused: every single character changed, every truncation, an added
// character and a version newer than this one are refused, with what is wrong.
func TestDamagedCodesAreRefused(t *testing.T) {
	seed := int64(1)
	code, err := share.Encode(share.Code{Lesson: "playground", Overrides: engine.Overrides{Seed: &seed},
		Moves: []engine.Command{engine.CmdNext{}, engine.CmdCrash{Worker: 1}, engine.CmdPastLease{}}})
	if err != nil {
		t.Fatal(err)
	}
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	for i := range code {
		for _, r := range alphabet {
			if byte(r) == code[i] {
				continue
			}
			bad := code[:i] + string(r) + code[i+1:]
			if _, err := share.Decode(bad); !errors.Is(err, share.ErrDamaged) {
				t.Fatalf("%s (character %d changed to %c): %v, want damaged", bad, i+1, r, err)
			}
		}
	}
	for n := 0; n < len(code); n++ {
		if _, err := share.Decode(code[:n]); !errors.Is(err, share.ErrDamaged) {
			t.Fatalf("cut to %d characters: %v, want damaged", n, err)
		}
	}
	for _, bad := range []string{code + "7", "7" + code, code + "!", "not a code"} {
		if _, err := share.Decode(bad); !errors.Is(err, share.ErrDamaged) {
			t.Errorf("%q: %v, want damaged", bad, err)
		}
	}
	_, err = share.Decode(code[:10] + "X" + code[11:])
	if err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a changed character: %v, want the checksum named", err)
	}
	// A newer version: the same body under version 2, with its checksum right.
	enc := base32.NewEncoding(alphabet).WithPadding(base32.NoPadding)
	raw, err := enc.DecodeString(code)
	if err != nil {
		t.Fatal(err)
	}
	raw = raw[:len(raw)-4]
	raw[0] = raw[0]&1 | byte(share.Version+1)<<1
	raw = binary.BigEndian.AppendUint32(raw, crc32.ChecksumIEEE(raw))
	_, err = share.Decode(enc.EncodeToString(raw))
	if !errors.Is(err, share.ErrNewer) || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("a version 2 code: %v, want newer, version 2", err)
	}
	// Read as people copy it: lower case, grouped with hyphens, O for 0 and I or L for 1.
	friendly := strings.ToLower(code[:8]) + "-" + code[8:]
	friendly = strings.NewReplacer("0", "O", "1", "l").Replace(friendly)
	if _, err := share.Decode(friendly); err != nil {
		t.Errorf("%s: %v", friendly, err)
	}
}

// FuzzDecode: no input makes the decoder panic, and whatever it accepts encodes again.
func FuzzDecode(f *testing.F) {
	for _, c := range []share.Code{
		{Lesson: "playground"},
		{Lesson: "stale-owner", Moves: []engine.Command{engine.CmdNext{}, engine.CmdCrash{Worker: 0}, engine.CmdClock{Delta: time.Second}}},
		{File: []byte("name: x\nworkers: A B\n"), Found: &share.Found{Checks: []string{engine.CheckOneOwner},
			Schedule: []explore.Transition{{Kind: explore.Act, Action: engine.ActClaim}, {Kind: explore.Clock, At: engine.Epoch.Add(501 * time.Millisecond)}}}},
	} {
		code, err := share.Encode(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(code)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := share.Decode(s)
		if err != nil {
			return
		}
		if _, err := share.Encode(c); err != nil && !errors.Is(err, share.ErrCannotShare) {
			t.Errorf("decoded %q but cannot encode it again: %v", s, err)
		}
	})
}
