package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"

	"leaselab/engine"
	"leaselab/engine/room"
	"leaselab/ui"
)

// An attendee's screen in the shared room: the room's table live, their own worker and rows
// highlighted, the room's ledgers and scoreboard, the question; their keys act for their own
// worker only. The result of their own key is drawn as soon as it is known; the room's table
// follows with the next frame.

// maxQueuedKeys is how many presses of space wait while one is in flight (a held key).
const maxQueuedKeys = 4

// frameMsg brings a frame of the room to a screen.
type frameMsg struct{ f *room.Frame }

// seatMsg is the result of one of the attendee's keys.
type seatMsg struct {
	res  room.Result
	err  error
	what string // "step", "finish", "back", "answer"
}

// seatProgram builds the attendee's screen for the session.
func (sr *sharedRoom) seatProgram(sess ssh.Session, ss *session, seat *room.Seat) *tea.Program {
	pty, _, _ := sess.Pty()
	m := &seatModel{seat: seat, name: seat.Name(), ctx: ss.ctx, keys: newSeatKeys(), st: newRoomStyles(sessionRenderer(sess), sr.s.cfg.Theme),
		quit: func() { ss.report(ui.LabStatus{Quit: true}) }}
	m.width, m.height, _ = ui.FitWindow(pty.Window.Width, pty.Window.Height)
	return sr.program(sess, ss, m)
}

// program runs m on the session's terminal, subscribed to the room's frames until the session
// ends.
func (sr *sharedRoom) program(sess ssh.Session, ss *session, m tea.Model) *tea.Program {
	p := tea.NewProgram(m, tea.WithInput(keyCounter{sess, ss, sr.s.cfg.Now}), tea.WithOutput(sess),
		tea.WithAltScreen(), tea.WithContext(ss.ctx), tea.WithoutSignalHandler())
	box := &mailbox{send: func(f *room.Frame) { p.Send(frameMsg{f}) }}
	sr.subscribe(box)
	context.AfterFunc(ss.ctx, func() { sr.unsubscribe(box) })
	ss.mu.Lock()
	ss.tea = p
	ss.mu.Unlock()
	return p
}

// seatModel is an attendee's screen. Its Update is the only goroutine that changes it.
type seatModel struct {
	seat *room.Seat
	name string // the seat's name, LockedBy of its workers
	ctx  context.Context
	keys seatKeys
	st   roomStyles
	quit func()

	width, height int
	f             *room.Frame
	backSeq       uint64 // frames up to this one were read before the attendee came back
	status        string
	acts          int // actions of their own keys that acted
	busy          bool
	queued        int
	scroll        int
}

// Init does nothing: the first frame comes from the room.
func (m *seatModel) Init() tea.Cmd { return nil }

// Update handles one message.
func (m *seatModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height, _ = ui.FitWindow(msg.Width, msg.Height)
	case frameMsg:
		m.f = msg.f
	case seatMsg:
		return m, m.result(msg)
	case tea.KeyMsg:
		var cmds []tea.Cmd
		for _, k := range eachKey(msg) {
			cmds = append(cmds, m.key(k))
		}
		return m, tea.Batch(cmds...)
	}
	return m, nil
}

// eachKey splits a message of several runes (fast typing, tmux send-keys) into one press each.
func eachKey(msg tea.KeyMsg) []tea.KeyMsg {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || msg.Paste {
		return []tea.KeyMsg{msg}
	}
	out := make([]tea.KeyMsg, len(msg.Runes))
	for i, r := range msg.Runes {
		out[i] = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}
	}
	return out
}

// away reports whether the attendee is away, as the latest frame read since they came back says.
func (m *seatModel) away() bool {
	if m.f == nil || m.f.Seq <= m.backSeq {
		return false
	}
	me, ok := m.f.Mine(m.name)
	return ok && !me.Present
}

// key handles one key press.
func (m *seatModel) key(k tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(k, m.keys.Quit):
		m.quit()
		return tea.Quit
	case key.Matches(k, m.keys.Up):
		m.scroll = max(0, m.scroll-m.page())
		return nil
	case key.Matches(k, m.keys.Down):
		m.scroll += m.page()
		return nil
	case m.away():
		// Any key brings an attendee back, with a fresh worker.
		m.status = "coming back…"
		if m.f != nil {
			m.backSeq = m.f.Seq
		}
		return m.run("back", func(ctx context.Context) (room.Result, error) { return room.Result{}, m.seat.Back(ctx) })
	case key.Matches(k, m.keys.Step):
		if m.busy {
			m.queued = min(m.queued+1, maxQueuedKeys)
			return nil
		}
		return m.step()
	case key.Matches(k, m.keys.Finish):
		if m.busy {
			return nil
		}
		return m.run("finish", m.seat.Finish)
	case key.Matches(k, m.keys.Answer):
		q := m.question()
		if q == nil || !q.Open {
			m.status = "no question is open"
			return nil
		}
		i := int(k.Runes[0] - '1')
		return m.run("answer", func(context.Context) (room.Result, error) {
			return room.Result{Why: q.Answers[min(i, len(q.Answers)-1)]}, m.seat.Answer(q.N, i)
		})
	}
	return nil
}

// step starts the attendee's worker's next action.
func (m *seatModel) step() tea.Cmd { return m.run("step", m.seat.Step) }

// run does one of the seat's actions off the Update loop.
func (m *seatModel) run(what string, do func(context.Context) (room.Result, error)) tea.Cmd {
	if what == "step" || what == "finish" {
		m.busy = true
	}
	ctx := m.ctx
	return func() tea.Msg {
		res, err := do(ctx)
		return seatMsg{res: res, err: err, what: what}
	}
}

// result takes the result of one of the attendee's keys.
func (m *seatModel) result(msg seatMsg) tea.Cmd {
	if msg.what == "step" || msg.what == "finish" {
		m.busy = false
	}
	res, err := msg.res, msg.err
	switch {
	case errors.Is(err, room.ErrAway):
		m.status = "you were away: press any key to come back with a fresh worker"
		m.backSeq, m.queued = 0, 0
	case errors.Is(err, room.ErrPaused):
		m.status, m.queued = "the teacher has paused the room: wait for them", 0
	case err != nil:
		m.status, m.queued = "not now: "+err.Error(), 0
	case msg.what == "back":
		m.status = "you are back with a fresh worker: space to claim"
	case msg.what == "answer":
		m.status = "your answer: " + res.Why
	case res.Acted:
		m.acts++
		m.status = "you: " + res.Event.Words()
	case res.Busy:
		m.status = "the database stayed busy: nothing happened, press space again"
	default:
		m.status = res.Why
	}
	if m.queued > 0 && !m.busy && err == nil {
		m.queued--
		return m.step()
	}
	return nil
}

// question is the question on screen, nil when none.
func (m *seatModel) question() *room.QuestionView {
	if m.f == nil {
		return nil
	}
	return m.f.Question
}

// page is how far ↑↓ scroll: a few rows.
func (m *seatModel) page() int { return 5 }

// View draws the attendee's screen, never larger than the window.
func (m *seatModel) View() string {
	w, h := screenSize(m.width, m.height)
	if w < 60 || h < 16 {
		return fit([]string{fmt.Sprintf("terminal too small for the room (%d×%d): the room needs 80×24", w, h)}, w, h)
	}
	name := m.name
	if m.f == nil {
		return fit([]string{"LEASELAB ROOM · you are " + name, "reading the room…"}, w, h)
	}
	f, st := m.f, m.st
	me, _ := f.Mine(name)
	title := fmt.Sprintf("LEASELAB ROOM · %s · you are %s (LockedBy %s) · round %d", f.Scenario, name, name, f.Round)
	switch {
	case f.Ended:
		title += " · THE ROUND IS OVER"
	case f.Paused:
		title += " · PAUSED by the teacher"
	}
	top := []string{st.bold.Render(title), settingsLine(f)}
	you := "YOU  " + seatState(me)
	if me.Present && !me.Crashed {
		you += fmt.Sprintf(" · next: %s (space)", nextWords(me.Next))
	}
	if m.away() {
		you += " · press any key to come back with a fresh worker"
	}
	top = append(top, you)
	if me.StaleWorker != "" {
		top = append(top, fmt.Sprintf("     your old worker %s is %s: F lets it %s, as a laptop opened again goes on", me.StaleWorker, me.StaleState, nextWords(me.StaleNext)))
	}
	top = append(top, fmt.Sprintf("[your actions: %d] %s", m.acts, m.status), "")
	var bottom []string
	bottom = append(bottom, ledgerLine(f))
	if q := f.Question; q != nil {
		bottom = append(bottom, m.questionLines(q, w)...)
	}
	bottom = append(bottom, boardLines(f, f.Ended, st)...)
	bottom = append(bottom, st.faint.Render(footer(m.keys.Step, m.keys.Finish, m.keys.Answer, m.keys.Up, m.keys.Quit)))
	spare := h - len(top) - len(bottom)
	seats := min(len(f.Seats)+1, max(3, spare/3))
	rows := spare - seats - 2 // the table's header and its scroll line
	lines := append(top, rowLines(f, name, m.scroll, rows, st)...)
	lines = append(lines, seatLines(f, name, -1, seats, st)...)
	return fit(append(lines, bottom...), w, h)
}

// questionLines are the question as an attendee sees it: its answers, theirs marked, and once
// it is closed, the room's answers.
func (m *seatModel) questionLines(q *room.QuestionView, w int) []string {
	me, _ := m.f.Mine(m.name)
	head := fmt.Sprintf("QUESTION %d: %s", q.N, q.Text)
	if !q.Open {
		head += "  (closed: the room answered)"
		return append([]string{m.st.bold.Render(head)}, histogram(q, w, m.st)...)
	}
	var as []string
	for i, a := range q.Answers {
		mark := ""
		if i == me.Answer {
			mark = "▶"
		}
		as = append(as, fmt.Sprintf("%s%d) %s", mark, i+1, a))
	}
	return []string{m.st.bold.Render(head), "  " + strings.Join(as, "   ") + "   (press the number)"}
}

// nextWords names a worker's next action for a key's help.
func nextWords(a engine.Action) string {
	switch a {
	case engine.ActClaim:
		return "claim a message"
	case engine.ActLoad:
		return "load every Pending row (leasing off)"
	case engine.ActSelect:
		return "select a candidate (atomic claim off)"
	case engine.ActTake:
		return "take the row it selected"
	case engine.ActCheck:
		return "call the provider"
	case engine.ActRenew:
		return "renew its lease (heartbeat)"
	case engine.ActFinalize:
		return "finalize"
	case engine.ActNone:
		return "wait (nothing to do now)"
	}
	return a.String()
}

// footer lists keys with their help.
func footer(bs ...key.Binding) string {
	var parts []string
	for _, b := range bs {
		if b.Enabled() {
			parts = append(parts, b.Help().Key+" "+b.Help().Desc)
		}
	}
	return strings.Join(parts, " · ")
}
