package ui

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/engine/share"
	"leaselab/ui/common"
)

// Share codes (engine/share): S shows the code of the moment on screen, made by Config.Share
// from the scenario open and the moves the history recorded up to its position; a lab opened
// from a code (Config.Replay) makes the code's moves on its first scenario, through the history,
// so that b steps back through them.

// sharedMsg carries the words S shows.
type sharedMsg struct {
	gen  int
	note string
	err  error
}

// shareCode is S: the code of the moment, made in a tea.Cmd.
func (m Model) shareCode() (Model, tea.Cmd) {
	if m.sess == nil || !m.track.Line.Valid {
		m.status = common.Status{Text: noSession(m.keys), Level: common.LevelWarn}
		return m, nil
	}
	makeCode, name, gen := m.cfg.Share, m.target, m.gen
	entries := m.track.Line.Entries[:m.track.Line.Pos] // a copy of the history's (timelineOf)
	return m, func() tea.Msg {
		note, err := makeCode(name, entries)
		return sharedMsg{gen: gen, note: note, err: err}
	}
}

// shared shows what S made.
func (m Model) shared(msg sharedMsg) Model {
	switch {
	case msg.gen != m.gen:
		m.status = common.Status{Text: "the scenario changed before its share code was made: press " + common.KeyName(m.keys.Share) + " again", Level: common.LevelWarn}
	case msg.err != nil:
		m.status = common.Status{Text: "no share code: " + msg.err.Error(), Level: common.LevelWarn}
	default:
		m.status = common.Status{Text: msg.note}
	}
	return m
}

// replayOpened queues the share code's moves on the first scenario opened: once, and never on
// another scenario (the first failed to open: its moves are dropped with it).
func (m Model) replayOpened(msg openedMsg) Model {
	moves := m.replay
	m.replay = nil
	if len(moves) > 0 && msg.err == nil && msg.sess != nil {
		m.queue = append([]op{{kind: opReplay, moves: moves}}, m.queue...)
	}
	return m
}

// replayCode makes a share code's moves on s, each recorded in h, and says how it went.
func replayCode(ctx context.Context, s *engine.Session, h *engine.History, moves []engine.Command, k KeyMap) (string, common.Level) {
	if h == nil || h.Session() != s {
		return "the share code's moves were not made: this scenario has no history", common.LevelError
	}
	if err := share.Replay(ctx, h, moves); err != nil {
		return fmt.Sprintf("the share code's moves stopped at step %d: %v", h.Pos(), err), common.LevelError
	}
	return fmt.Sprintf("opened from a share code: its %d %s made again, on this database; %s steps back through them, %s steps on",
		len(moves), common.Plural(len(moves), "move"), common.KeyName(k.Back), common.KeyName(k.Step)), common.LevelInfo
}
