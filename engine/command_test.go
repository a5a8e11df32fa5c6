package engine_test

import (
	"context"
	"errors"
	"testing"

	"leaselab/engine"
)

// TestCommandsFlipAndRecord: the toggle and pause commands flip what they name, each says what
// it did in its own event, a free run is never done by Do, and a history replays the same
// values back to the same place.
func TestCommandsFlipAndRecord(t *testing.T) {
	ctx := context.Background()
	s, h, _ := openHistory(t, "playground")
	was, _ := s.Settings().Get(engine.ToggleFencing)
	for i, want := range []bool{!was, was} {
		do(t, h, engine.CmdToggle{Name: engine.ToggleFencing})
		if on, _ := s.Settings().Get(engine.ToggleFencing); on != want {
			t.Fatalf("after %d toggles fencing is %v, want %v", i+1, on, want)
		}
	}
	do(t, h, engine.CmdPause{Worker: 0})
	if !s.Workers()[0].View().Paused {
		t.Fatal("CmdPause did not pause worker 1")
	}
	p := h.Begin()
	res, err := s.Do(ctx, engine.CmdPause{Worker: 0})
	if err != nil || res.Event.Seq == 0 || s.Workers()[0].View().Paused {
		t.Fatalf("CmdPause again: %+v, %v; want worker 1 awake and the wake's event", res, err)
	}
	h.Commit(engine.CmdPause{Worker: 0}, p, res.Acted)
	do(t, h, engine.CmdNext{})
	if _, err := s.Do(ctx, engine.CmdFree{}); !errors.Is(err, engine.ErrNotReplayable) {
		t.Fatalf("Do(CmdFree): %v, want ErrNotReplayable", err)
	}
	if _, err := s.Do(ctx, engine.CmdCrash{Worker: 99}); !errors.Is(err, engine.ErrNoWorker) {
		t.Fatalf("Do(CmdCrash{99}): %v, want ErrNoWorker", err)
	}
	want := picture(t, h.Session())
	if _, err := h.Goto(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Goto(ctx, h.Len()); err != nil {
		t.Fatal(err)
	}
	if got := picture(t, h.Session()); got != want {
		t.Fatalf("the replay of the recorded commands differs:\n%s\nwant\n%s", got, want)
	}
	if e := h.Entries()[0]; e.Command != (engine.CmdToggle{Name: engine.ToggleFencing}) {
		t.Fatalf("entry 1 records %#v, want the toggle command itself", e.Command)
	}
}

// Each command says what it is: the two steps, the worker it is aimed at, the toggle it flips.
func TestCommandInfo(t *testing.T) {
	for _, c := range []struct {
		cmd  engine.Command
		want engine.CommandInfo
	}{
		{engine.CmdNext{}, engine.CommandInfo{Step: true, Worker: -1}},
		{engine.CmdStepWorker{Worker: 1}, engine.CommandInfo{Step: true, Worker: 1}},
		{engine.CmdCrash{Worker: 2}, engine.CommandInfo{Worker: 2}},
		{engine.CmdRestart{Worker: 0}, engine.CommandInfo{Worker: 0}},
		{engine.CmdPause{Worker: 3}, engine.CommandInfo{Worker: 3}},
		{engine.CmdToggle{Name: engine.ToggleFencing}, engine.CommandInfo{Worker: -1, Toggle: engine.ToggleFencing}},
		{engine.CmdClock{Delta: 1}, engine.CommandInfo{Worker: -1}},
		{engine.CmdPastLease{}, engine.CommandInfo{Worker: -1}},
		{engine.CmdFinish{}, engine.CommandInfo{Worker: -1}},
		{engine.CmdFree{}, engine.CommandInfo{Worker: -1}},
		{engine.CmdRedrive{Key: "PAY-001"}, engine.CommandInfo{Worker: -1}},
	} {
		if got := c.cmd.Info(); got != c.want {
			t.Errorf("%T.Info() = %+v, want %+v", c.cmd, got, c.want)
		}
	}
}
