package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"leaselab/engine"
	"leaselab/ui"
	"leaselab/ui/common"
	"leaselab/ui/diagram"
)

// run --cast: the run as the lab shows it, recorded as an asciicast v2 file that asciinema play
// replays. The run itself is the lab's: the lab (ui.Model, the real screen) is opened on the
// run's session at the cast's size and stepped with space, as a person would, without a
// terminal; each screen it draws is a frame. A question of the script is shown, then skipped
// (esc: the step runs unscored, as leaselab run passes questions by). The frames' times are
// their index times castPace: the wall clock plays no part in them.

// castPace is the time between two frames of a cast.
const castPace = time.Second

// maxCastFrames bounds a cast: a run longer than this many steps is recorded up to there, then
// run to its end with the lab's e, whose screen (the verdict) is the last frame.
const maxCastFrames = 600

// maxMessagesPerKey bounds what one key may set going in the lab driven without a terminal: a
// key whose commands never end is a defect, not a long run.
const maxMessagesPerKey = 100_000

// labRecording is a run recorded from the lab: its screens, oldest first, and what its
// space-time diagram (t) draws at the end.
type labRecording struct {
	width, height int
	frames        []string
	diagram       diagram.Input
}

// labDriver drives the lab's model as Bubble Tea would, but synchronously and without a
// terminal: each command runs at once and its message goes back into Update.
type labDriver struct {
	m    tea.Model
	msgs int
}

// send feeds msg to the model and runs what follows from it.
func (d *labDriver) send(msg tea.Msg) error {
	var cmd tea.Cmd
	d.m, cmd = d.m.Update(msg)
	return d.run(cmd)
}

// run executes cmd as Bubble Tea would: the commands of a batch in turn, each message back
// into Update.
func (d *labDriver) run(cmd tea.Cmd) error {
	if cmd == nil {
		return nil
	}
	if d.msgs++; d.msgs > maxMessagesPerKey {
		return fmt.Errorf("--cast: the lab did not settle after %d messages", maxMessagesPerKey)
	}
	switch msg := cmd().(type) {
	case nil, tea.QuitMsg:
		return nil
	case tea.BatchMsg:
		for _, c := range msg {
			if err := d.run(c); err != nil {
				return err
			}
		}
		return nil
	default:
		return d.send(msg)
	}
}

// press sends one key and runs what it sets going.
func (d *labDriver) press(k tea.KeyMsg) error {
	d.msgs = 0
	return d.send(k)
}

func (d *labDriver) lab() ui.Model { return d.m.(ui.Model) }

var (
	keySpace = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	keyEsc   = tea.KeyMsg{Type: tea.KeyEsc}
	keyEnd   = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'e'}}
)

// castStyles are the lab's styles for a cast: 256 colours on a dark background, as a terminal
// player shows them, whatever this process's own terminal is.
func castStyles() common.Styles {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(true)
	return common.DefaultStyles(r)
}

// recordLab opens the lab at w×h on sess, a session no step has run yet, among lessons (the
// built-in scenarios, as the lab's header counts them), and steps it to the end of its run
// with space, keeping each screen.
func recordLab(ctx context.Context, sess *engine.Session, lessons []string, w, h int) (*labRecording, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opened := false
	cfg := ui.Config{Start: sess.Scenario.Name, Scenarios: lessons,
		Open: func(context.Context, string) (*engine.Session, error) {
			if opened {
				return nil, errors.New("--cast: the recorded lab opens its run once")
			}
			opened = true
			return sess, nil
		}}
	d := &labDriver{m: ui.New(ctx, cfg, castStyles())}
	rec := &labRecording{width: w, height: h}
	if err := d.send(tea.WindowSizeMsg{Width: w, Height: h}); err != nil {
		return nil, err
	}
	if err := d.run(d.m.Init()); err != nil {
		return nil, err
	}
	rec.frames = append(rec.frames, d.m.View())
	for !d.lab().Over() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		k, toEnd := keySpace, len(rec.frames) >= maxCastFrames
		switch {
		case toEnd:
			k = keyEnd
		case d.lab().Asking():
			k = keyEsc
		}
		if err := d.press(k); err != nil {
			return nil, err
		}
		rec.frames = append(rec.frames, d.m.View())
		if toEnd && !d.lab().Over() {
			return nil, fmt.Errorf("--cast: the lab's e did not reach the end of the run after %d steps", len(rec.frames))
		}
	}
	rec.diagram = d.lab().DiagramInput()
	return rec, nil
}

// castHeader is an asciicast v2 file's first line.
type castHeader struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp"`
	Title     string            `json:"title"`
	Env       map[string]string `json:"env"`
}

// writeCast writes rec as an asciicast v2 file: the header, then each screen as an output event
// that clears the terminal and draws it, at its index times castPace.
func writeCast(w io.Writer, rec *labRecording, title string, at time.Time) error {
	enc := json.NewEncoder(w) // one JSON value a line, as asciicast v2 wants
	enc.SetEscapeHTML(false)
	if err := enc.Encode(castHeader{Version: 2, Width: rec.width, Height: rec.height, Timestamp: at.Unix(), Title: title,
		Env: map[string]string{"TERM": "xterm-256color"}}); err != nil {
		return err
	}
	for i, screen := range rec.frames {
		data := "\x1b[?25l\x1b[H\x1b[2J" + strings.ReplaceAll(screen, "\n", "\r\n")
		t := (time.Duration(i) * castPace).Seconds()
		if err := enc.Encode([]any{t, "o", data}); err != nil {
			return err
		}
	}
	return nil
}
