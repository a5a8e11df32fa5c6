package ui

import (
	"context"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
)

// countingRoom is a Room that admits everything and counts what it was asked.
type countingRoom struct {
	mu                  sync.Mutex
	admits, costs, keys int
	held                string
}

func (r *countingRoom) Admit(_ context.Context, cost int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.admits++
	r.costs += cost
	return nil
}

func (r *countingRoom) Interactive() func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys++
	return func() {}
}

func (r *countingRoom) HeldBack() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

func (r *countingRoom) counts() (admits, costs, keys int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.admits, r.costs, r.keys
}

// TestRoomAdmitsFreeWorkAndPutsKeysFirst: in a served lab, every free-running worker's action
// and every poll of the screen is admitted by the room (a poll of 500 rows costs 11 actions),
// each command a key asked for is marked interactive, and the header says when the room holds
// the free run back.
func TestRoomAdmitsFreeWorkAndPutsKeysFirst(t *testing.T) {
	room := &countingRoom{}
	cfg := Config{Scenarios: sqliteLessons(), Open: opener(t, engine.Overrides{}), Room: room}
	l := newLabOn(t, "many-workers", 120, 40, cfg)
	l.press("n")
	if l.m.ask.Open != nil { // many-workers asks before its step: esc skips the question and steps
		l.send(tea.KeyMsg{Type: tea.KeyEsc})
	}
	if _, _, keys := room.counts(); keys == 0 {
		t.Fatal("a step asked for by a key was not marked interactive")
	}
	l.press(">", ">", ">", ">", ">", ">", ">", ">", "g")
	room.mu.Lock()
	room.held = "held back by the room (its free runs share 300 actions/s now)"
	room.mu.Unlock()
	l.pollUntil("processed 20", func() bool { return l.processed() >= 20 })
	admits, costs, _ := room.counts()
	if admits < 3*20 {
		t.Errorf("%d admissions for 20 messages processed (a claim, a provider call and a finalize each)", admits)
	}
	if polls := l.m.free.polls; costs < admits+10*polls {
		t.Errorf("%d units for %d admissions and %d polls of 500 rows: a poll should cost 11", costs, admits, polls)
	}
	l.must("FREE-RUNNING", "held back") // the short form: at 120 columns the whole note does not fit
	if pollCost(l.m.frame) != 11 {
		t.Errorf("a poll of %d rows costs %d", len(l.m.frame.Rows), pollCost(l.m.frame))
	}
}
