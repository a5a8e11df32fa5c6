package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/store"

	"pgregory.net/rapid"
)

// modelRow is the protocol's view of one message, kept apart from the database.
type modelRow struct {
	status  string
	owner   string
	until   time.Time
	version int64
	commits int
}

// held is what the model believes a worker holds.
type held struct {
	key     string
	version int64
}

// protocolModel is a small in-memory model of outbox leasing: claims, ownership-checked (and
// fenced) finalizes, expiry. Each engine action is replayed on it and the database must agree.
type protocolModel struct {
	rows    map[string]*modelRow
	order   []string
	held    map[string]held // worker name -> message in progress
	lease   time.Duration
	fencing bool
}

func (m *protocolModel) claimable(r *modelRow, now time.Time) bool {
	return r.status == engine.StatusPending || (r.status == engine.StatusProcessing && r.until.Before(now))
}

// apply checks that event e was allowed by the protocol and updates the model.
func (m *protocolModel) apply(t *rapid.T, e engine.Event, id string) {
	switch e.Kind {
	case engine.EvClaim:
		switch e.Outcome {
		case "won", "reclaimed":
			r := m.rows[e.Key]
			if !m.claimable(r, e.At) {
				t.Fatalf("%s claimed %s, which the model says is not claimable: %+v", e.Worker, e.Key, *r)
			}
			for _, k := range m.order { // the claim takes the oldest claimable row
				if k == e.Key {
					break
				}
				if m.claimable(m.rows[k], e.At) {
					t.Fatalf("%s claimed %s while older %s was claimable", e.Worker, e.Key, k)
				}
			}
			r.status, r.owner, r.until, r.version = engine.StatusProcessing, id, e.At.Add(m.lease), r.version+1
			m.held[e.Worker] = held{e.Key, r.version}
		case "blocked", "empty":
			unfinished := false
			for _, k := range m.order {
				r := m.rows[k]
				if m.claimable(r, e.At) {
					t.Fatalf("%s claim came back %s while %s was claimable", e.Worker, e.Outcome, k)
				}
				unfinished = unfinished || r.status != engine.StatusProcessed
			}
			if unfinished != (e.Outcome == "blocked") {
				t.Fatalf("%s claim %s, but unfinished rows: %v", e.Worker, e.Outcome, unfinished)
			}
		}
	case engine.EvFinalize:
		h := m.held[e.Worker]
		delete(m.held, e.Worker)
		r := m.rows[e.Key]
		allowed := r.status == engine.StatusProcessing && r.owner == id && (!m.fencing || r.version == h.version)
		committed := e.Outcome == "committed" || e.Outcome == "violation"
		if committed != allowed {
			t.Fatalf("%s finalize of %s: engine %s, model allows %v (row %+v, held v%d)", e.Worker, e.Key, e.Outcome, allowed, *r, h.version)
		}
		if committed {
			r.status, r.until = engine.StatusProcessed, time.Time{}
			r.commits++
		}
	case engine.EvCrash:
		delete(m.held, e.Worker)
	}
}

// TestProtocolProperty drives the engine with random actions (steps, crashes, restarts, pauses,
// clock moves) over a real database and checks after every action that the database equals the
// model, and the invariants hold: one owner per row, at most one committed outcome per message,
// and, with fencing, no ownership violation, even when two workers share one worker id.
func TestProtocolProperty(t *testing.T) {
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		ctx := context.Background()
		fencing := rapid.Bool().Draw(rt, "fencing")
		sharedID := rapid.Bool().Draw(rt, "sharedID")
		messages := rapid.IntRange(1, 3).Draw(rt, "messages")
		src := fmt.Sprintf("name: prop\nmessages: %d\nworkers: A B\nlease: 300ms\nfencing: %s\n", messages, engine.OnOff(fencing))
		if sharedID {
			src += "worker: A2 id=Worker-A\n"
		}
		sc, err := scenario.Parse("prop.scenario", []byte(src))
		if err != nil {
			rt.Fatal(err)
		}
		db, err := store.Create(ctx, filepath.Join(dir, fmt.Sprintf("prop-%d.db", n)))
		if err != nil {
			rt.Fatal(err)
		}
		defer db.Close()
		s, err := engine.NewSession(ctx, sc, db)
		if err != nil {
			rt.Fatal(err)
		}
		defer s.Close()
		m := &protocolModel{rows: map[string]*modelRow{}, held: map[string]held{}, lease: 300 * time.Millisecond, fencing: fencing}
		for i := 1; i <= messages; i++ {
			k := engine.MessageKey(i)
			m.rows[k] = &modelRow{status: engine.StatusPending}
			m.order = append(m.order, k)
		}
		ids := map[string]string{}
		for _, w := range s.Workers() {
			ids[w.Name] = w.ID
		}
		workers := len(s.Workers())
		steps := rapid.IntRange(1, 120).Draw(rt, "steps")
		for step := 0; step < steps; step++ {
			before := s.Ledger().EventCount()
			i := rapid.IntRange(0, workers-1).Draw(rt, "worker")
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0:
				s.Crew().Crash(i)
			case 1:
				s.Crew().Restart(ctx, i)
			case 2:
				s.Crew().SetPaused(i, !s.Workers()[i].View().Paused)
			case 3:
				s.Crew().AdvanceClock(time.Duration(rapid.IntRange(1, 700).Draw(rt, "ms")) * time.Millisecond)
			default:
				if _, _, err := s.Crew().Step(ctx, i); err != nil {
					rt.Fatal(err)
				}
			}
			for _, e := range s.Ledger().EventsSince(before) {
				m.apply(rt, e, ids[e.Worker])
			}
			rows, err := db.Snapshot(ctx)
			if err != nil {
				rt.Fatal(err)
			}
			for _, r := range rows {
				want := m.rows[r.IdempotencyKey]
				got := modelRow{status: r.Status, until: r.LockedUntil, version: r.LeaseVersion, commits: want.commits}
				if r.Status == engine.StatusProcessing {
					got.owner = r.LockedBy
				} else {
					got.owner = want.owner // a Processed row keeps its last LockedBy; the model need not
				}
				if got != *want {
					rt.Fatalf("step %d: %s in the database %+v, in the model %+v", step, r.IdempotencyKey, got, *want)
				}
				if want.commits > 1 {
					rt.Fatalf("%s: outcome written %d times", r.IdempotencyKey, want.commits)
				}
			}
			total := s.Ledger().Total()
			if fencing && total.OwnershipViolations != 0 {
				rt.Fatalf("%d ownership violations with fencing on", total.OwnershipViolations)
			}
			if !sharedID && total.OwnershipViolations != 0 {
				rt.Fatalf("%d ownership violations with distinct worker ids and the ownership check", total.OwnershipViolations)
			}
		}
	})
}
