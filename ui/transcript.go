package ui

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine/words"
	"leaselab/ui/common"
	"leaselab/ui/diagram"
)

// transcriptMsg says where w wrote the session's transcript, or why it could not.
type transcriptMsg struct {
	gen  int
	path string
	err  error
}

// writeTranscript is w: the session so far as a Markdown transcript (words.WriteMarkdown),
// written in a tea.Cmd to a new file in Config.TranscriptDir (beside the --db database) or the
// working folder: leaselab-<scenario>-<time>.md, never overwriting a file (O_EXCL, 0600), with
// the space-time diagram t draws now beside it as the same name's .svg, which it shows.
func (m Model) writeTranscript() (Model, tea.Cmd) {
	s := m.sess
	if s == nil {
		m.status = common.Status{Text: "no scenario is open yet: nothing to write", Level: common.LevelWarn}
		return m, nil
	}
	ctx, g, gen, at, asked := m.ctx, m.gate, m.gen, m.now(), m.ask.AskedSoFar(m.track.Line)
	pic := m.DiagramInput() // the diagram t draws now, the picture beside the transcript
	dir, quota := m.cfg.TranscriptDir, m.cfg.Handouts
	if dir == "" {
		dir = "."
	}
	if m.cfg.Served {
		switch {
		case quota == nil:
			m.status = common.Status{Text: "this lab runs on a server, which keeps no files of yours: for a handout, run \"leaselab run " +
				s.Scenario.Name + " --transcript FILE.md\" on your own machine (the teacher can allow handouts with serve --handouts)", Level: common.LevelWarn}
			return m, nil
		case !quota.take():
			m.status = common.Status{Text: fmt.Sprintf("this lab has written its %d handouts, the most the server allows one lab", quota.PerLab), Level: common.LevelWarn}
			return m, nil
		}
		dir = quota.Dir
	}
	m.status = common.Status{Text: "writing the transcript …"}
	return m, func() tea.Msg {
		if !g.enter() {
			return nil
		}
		defer g.leave()
		rep, err := s.BuildReport(ctx, "", at, "")
		if err == nil {
			rep.Questions = asked
		}
		if err != nil {
			if quota != nil {
				quota.giveBack()
			}
			return transcriptMsg{gen: gen, err: err}
		}
		path, err := words.SaveTranscriptPictured(OSFiles{}, dir, s.Scenario.Name, at, rep, s.Moments(),
			func(w io.Writer) error { return diagram.WriteSVG(w, pic) })
		if err != nil && quota != nil {
			quota.giveBack()
		}
		return transcriptMsg{gen: gen, path: path, err: err}
	}
}

// note says on the status line where the transcript went; served: a served lab's handout.
func (msg transcriptMsg) note(served bool) common.Status {
	switch {
	case msg.err != nil && served:
		return common.Status{Text: "handout not written: the server could not write it to the teacher's folder", Level: common.LevelError}
	case msg.err != nil:
		return common.Status{Text: "transcript not written: " + msg.err.Error(), Level: common.LevelError}
	case served:
		// The server's folders are not the attendee's business: the file's name only.
		return common.Status{Text: fmt.Sprintf("handout written for the teacher: %s (the teacher's folder has it)", filepath.Base(msg.path))}
	default:
		shown := msg.path
		if abs, err := filepath.Abs(msg.path); err == nil && filepath.Dir(msg.path) == "." {
			shown = abs
		}
		return common.Status{Text: fmt.Sprintf("transcript written: %s (Markdown: the steps with their SQL, the outbox at each moment, the verdict; its space-time diagram beside it, .svg)", shown)}
	}
}

// OSFiles are the operating system's files, where the lab and leaselab run write
// transcripts (words.Files): a new file each, mode 0600, never one that is there already.
type OSFiles struct{}

// Create makes a new file at path (O_EXCL, 0600).
func (OSFiles) Create(path string) (io.WriteCloser, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

// Remove removes the file at path.
func (OSFiles) Remove(path string) error { return os.Remove(path) }
