package ui

import (
	"fmt"
	"path/filepath"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
)

// transcriptMsg says where w wrote the session's transcript, or why it could not.
type transcriptMsg struct {
	gen  int
	path string
	err  error
}

// writeTranscript is w: the session so far as a Markdown transcript (engine.WriteMarkdown),
// written in a tea.Cmd to a new file in Config.TranscriptDir (beside the --db database) or the
// working folder: leaselab-<scenario>-<time>.md, never overwriting a file (O_EXCL, 0600).
func (m Model) writeTranscript() (Model, tea.Cmd) {
	s := m.sess
	if s == nil {
		m.status = status{text: "no scenario is open yet: nothing to write", level: levelWarn}
		return m, nil
	}
	ctx, g, gen, at := m.ctx, m.gate, m.gen, m.now()
	dir := m.cfg.TranscriptDir
	if dir == "" {
		dir = "."
	}
	m.status = status{text: "writing the transcript …"}
	return m, func() tea.Msg {
		if !g.enter() {
			return nil
		}
		defer g.leave()
		rep, err := s.BuildReport(ctx, "", at, "")
		if err != nil {
			return transcriptMsg{gen: gen, err: err}
		}
		path, err := engine.SaveTranscript(dir, s.Scenario.Name, at, rep, s.Moments())
		return transcriptMsg{gen: gen, path: path, err: err}
	}
}

// transcriptWritten says in the status line where the transcript went.
func (m Model) transcriptWritten(msg transcriptMsg) Model {
	switch {
	case msg.err != nil:
		m.status = status{text: "transcript not written: " + msg.err.Error(), level: levelError}
	default:
		shown := msg.path
		if abs, err := filepath.Abs(msg.path); err == nil && filepath.Dir(msg.path) == "." {
			shown = abs
		}
		m.status = status{text: fmt.Sprintf("transcript written: %s (Markdown: the steps with their SQL, the outbox at each moment, the verdict)", shown)}
	}
	return m
}
