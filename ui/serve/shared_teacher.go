package serve

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"

	"leaselab/engine"
	"leaselab/engine/room"
	"leaselab/engine/words"
	"leaselab/ui"
)

// The teacher's screen in the shared room: the same table, every attendee's worker and state,
// and the controls the lab's keys give one person, for the whole room at once — the toggles,
// the clock, a pause, the end of a round, a crash of a chosen attendee's worker, a reset, a
// question whose answers arrive as a histogram, the idle limit, and the transcript.

// idleChoices are the idle limits i cycles through.
var idleChoices = []time.Duration{0, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute}

// teacherProgram builds the teacher's screen of the shared room.
func (sr *sharedRoom) teacherProgram(sess ssh.Session, ss *session) *tea.Program {
	pty, _, _ := sess.Pty()
	m := &roomTeacher{sr: sr, ctx: ss.ctx, st: newRoomStyles(sessionRenderer(sess), sr.s.cfg.Theme), sel: -1,
		keys: newTeacherKeys(roomToggles(false))}
	m.width, m.height, _ = ui.FitWindow(pty.Window.Width, pty.Window.Height)
	return sr.program(sess, ss, m)
}

// teacherMode is what the teacher's keys do now.
type teacherMode int

const (
	modeRoom   teacherMode = iota // the room's controls
	modePick                      // choosing a question: a digit asks one of the scenario's, t types one
	modeTyping                    // typing a question
)

// roomTeacher is the teacher's screen.
type roomTeacher struct {
	sr    *sharedRoom
	ctx   context.Context
	st    roomStyles
	keys  teacherKeys
	typed []rune // the question being typed

	width, height int
	f             *room.Frame
	sel           int // the chosen attendee, an index of f.Seats (-1: none yet)
	mode          teacherMode
	resetAsked    bool
	note          string
}

// noteMsg is what one of the teacher's commands did.
type noteMsg string

// Init does nothing: the first frame comes from the room.
func (m *roomTeacher) Init() tea.Cmd { return nil }

// Update handles one message.
func (m *roomTeacher) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height, _ = ui.FitWindow(msg.Width, msg.Height)
	case frameMsg:
		if m.f == nil || len(m.keys.Toggles) == 0 || m.f.RowLocks != msg.f.RowLocks {
			m.keys = newTeacherKeys(roomToggles(msg.f.RowLocks))
		}
		m.f = msg.f
		if m.sel < 0 && len(m.f.Seats) > 0 || m.sel >= len(m.f.Seats) {
			m.sel = len(m.f.Seats) - 1
		}
	case noteMsg:
		m.note = string(msg)
	case tea.KeyMsg:
		if m.mode == modeTyping {
			return m, m.typing(msg)
		}
		var cmds []tea.Cmd
		for _, k := range eachKey(msg) {
			cmds = append(cmds, m.key(k))
		}
		return m, tea.Batch(cmds...)
	}
	return m, nil
}

// do runs a command on the room off the Update loop; its words come back as a note.
func (m *roomTeacher) do(f func(ctx context.Context) string) tea.Cmd {
	ctx := m.ctx
	return func() tea.Msg { return noteMsg(f(ctx)) }
}

// key handles one of the teacher's keys.
func (m *roomTeacher) key(k tea.KeyMsg) tea.Cmd {
	r := m.sr.room
	if m.mode == modePick {
		return m.pick(k)
	}
	reset := m.resetAsked
	m.resetAsked = false
	for i, b := range m.keys.Toggles {
		if key.Matches(k, b) {
			name := roomToggles(m.f != nil && m.f.RowLocks)[i].Name
			return m.do(func(ctx context.Context) string { return eventWords(r.Toggle(ctx, name)) + " — for everyone" })
		}
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		return tea.Quit
	case key.Matches(k, m.keys.PastLease):
		return m.do(func(ctx context.Context) string { return eventWords(r.PastLease(ctx)) })
	case key.Matches(k, m.keys.Clock):
		return m.do(func(ctx context.Context) string { return eventWords(r.Clock(ctx, 100*time.Millisecond)) })
	case key.Matches(k, m.keys.Pause):
		paused := m.f != nil && m.f.Paused
		return m.do(func(context.Context) string {
			r.SetPaused(!paused)
			if paused {
				return "the room goes on"
			}
			return "the room is paused: no attendee's key acts"
		})
	case key.Matches(k, m.keys.End):
		return m.do(func(context.Context) string {
			r.End()
			return "the round is over: every screen shows the scoreboard (p goes on)"
		})
	case key.Matches(k, m.keys.Reset):
		if !reset {
			m.resetAsked = true
			m.note = "press R again to reset the outbox for everyone: every row Pending again, every attendee a fresh worker"
			return nil
		}
		return m.do(func(ctx context.Context) string {
			if err := r.Reset(ctx); err != nil {
				return "reset: " + err.Error()
			}
			return "the outbox is reset: a fresh round"
		})
	case key.Matches(k, m.keys.Prev):
		m.sel = max(0, m.sel-1)
	case key.Matches(k, m.keys.Next):
		if m.f != nil {
			m.sel = min(len(m.f.Seats)-1, m.sel+1)
		}
	case key.Matches(k, m.keys.Crash):
		if m.f == nil || m.sel < 0 || m.sel >= len(m.f.Seats) {
			m.note = "no attendee to crash: choose one with ↑↓"
			return nil
		}
		name := m.f.Seats[m.sel].Name
		return m.do(func(context.Context) string { return eventWords(r.Crash(name)) })
	case key.Matches(k, m.keys.Ask):
		if m.f != nil && m.f.Question != nil && m.f.Question.Open {
			return m.do(func(context.Context) string {
				r.CloseQuestion()
				return "the question is closed: every screen shows the answers"
			})
		}
		m.mode, m.note = modePick, ""
	case key.Matches(k, m.keys.Idle):
		return m.do(func(context.Context) string { return m.sr.nextIdle() })
	case key.Matches(k, m.keys.Write):
		return m.do(m.sr.writeTranscript)
	}
	return nil
}

// pickLines list the questions to pick from, one a line.
func (m *roomTeacher) pickLines() []string {
	lines := []string{m.st.bold.Render("ASK THE ROOM:")}
	for i, q := range m.sr.room.Questions() {
		if i == 9 {
			break
		}
		lines = append(lines, fmt.Sprintf("  %d) %s", i+1, q.Text))
	}
	return append(lines, "  t) type a question   esc) cancel")
}

// pick takes the key that chooses a question.
func (m *roomTeacher) pick(k tea.KeyMsg) tea.Cmd {
	qs := m.sr.room.Questions()
	switch {
	case key.Matches(k, m.keys.Cancel):
		m.mode, m.note = modeRoom, ""
	case key.Matches(k, m.keys.Type):
		m.mode, m.note, m.typed = modeTyping, "type the question, then | and its answers (none: yes | no | not sure); enter asks, esc cancels", nil
		return nil
	case k.Type == tea.KeyRunes && len(k.Runes) == 1 && k.Runes[0] >= '1' && k.Runes[0] <= '9' && int(k.Runes[0]-'1') < len(qs):
		q := qs[k.Runes[0]-'1']
		m.mode = modeRoom
		return m.ask(q)
	}
	return nil
}

// maxTyped bounds what the teacher may type: a question and its answers.
const maxTyped = room.MaxQuestionRunes + room.MaxAnswers*(room.MaxAnswerRunes+3)

// typing takes a key while the teacher types a question: letters, space, backspace, enter, esc.
func (m *roomTeacher) typing(k tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(k, m.keys.Cancel):
		m.mode, m.note = modeRoom, ""
	case key.Matches(k, m.keys.Submit):
		q, err := room.ParseQuestion(string(m.typed))
		if err != nil {
			m.note = "not asked: " + err.Error()
			return nil
		}
		m.mode = modeRoom
		return m.ask(q)
	case k.Type == tea.KeyBackspace:
		if len(m.typed) > 0 {
			m.typed = m.typed[:len(m.typed)-1]
		}
	case k.Type == tea.KeySpace:
		m.typed = append(m.typed, ' ')
	case k.Type == tea.KeyRunes:
		m.typed = append(m.typed, k.Runes...)
	}
	if len(m.typed) > maxTyped {
		m.typed = m.typed[:maxTyped]
	}
	return nil
}

// ask opens q for the room.
func (m *roomTeacher) ask(q room.Question) tea.Cmd {
	r := m.sr.room
	return m.do(func(context.Context) string {
		if err := r.Ask(q); err != nil {
			return "not asked: " + err.Error()
		}
		return "asked the room: the answers come in below (Q closes it)"
	})
}

// eventWords says what a command did: its event, or why not.
func eventWords(ev engine.Event, err error) string {
	if err != nil {
		return "not now: " + err.Error()
	}
	return ev.Words()
}

// View draws the teacher's screen, never larger than the window.
func (m *roomTeacher) View() string {
	w, h := screenSize(m.width, m.height)
	if w < 60 || h < 16 {
		return fit([]string{fmt.Sprintf("terminal too small for the room (%d×%d): the teacher's screen needs 80×24", w, h)}, w, h)
	}
	if m.f == nil {
		return fit([]string{"LEASELAB ROOM — the teacher", "reading the room…"}, w, h)
	}
	f, st := m.f, m.st
	here := 0
	for _, s := range f.Seats {
		if s.Present {
			here++
		}
	}
	title := fmt.Sprintf("LEASELAB ROOM — the teacher · %s · %d attendees here (of %d at most) · round %d · idle limit %s",
		f.Scenario, here, m.sr.s.cfg.MaxSessions, f.Round, idleWordsOf(time.Duration(m.sr.idle.Load())))
	switch {
	case f.Ended:
		title += " · ROUND OVER"
	case f.Paused:
		title += " · PAUSED"
	}
	top := []string{st.bold.Render(title), settingsLine(f), st.faint.Render("database: " + f.DBPath)}
	var bottom []string
	bottom = append(bottom, ledgerLine(f))
	if q := f.Question; q != nil {
		state := "open"
		if !q.Open {
			state = "closed"
		}
		bottom = append(bottom, st.bold.Render(fmt.Sprintf("QUESTION %d (%s, %s): %s — %d answered", q.N, q.From, state, q.Text, q.Given)))
		bottom = append(bottom, histogram(q, w, st)...)
		if q.Right >= 0 {
			bottom = append(bottom, st.faint.Render(fmt.Sprintf("  the scenario's answer under these settings: %d) %s", q.Right+1, q.Because)))
		}
	}
	bottom = append(bottom, boardLines(f, true, st)...)
	for _, e := range f.Events {
		bottom = append(bottom, st.faint.Render("  "+e))
	}
	// The question being typed or picked, the note and the footer stay; what happened (the
	// events, then the board) is cut first on a small screen.
	var tail []string
	switch m.mode {
	case modeTyping:
		tail = append(tail, "QUESTION: "+words.Escape(string(m.typed))+"█")
	case modePick:
		tail = append(tail, m.pickLines()...)
	}
	if m.note != "" {
		tail = append(tail, m.note)
	}
	tail = append(tail, st.faint.Render(m.footer()))
	// The attendees first, then the table, then what happened.
	spare := h - len(top) - len(tail)
	seats := min(len(f.Seats)+2, max(3, spare/2))
	rows := min(len(f.Rows), max(2, (spare-seats)/3))
	lines := append(top, seatLines(f, "", m.sel, seats, st)...)
	lines = append(lines, rowLines(f, "", 0, rows, st)...)
	if keep := h - len(lines) - len(tail); keep < len(bottom) {
		bottom = bottom[:max(0, keep)]
	}
	lines = append(lines, bottom...)
	return fit(append(lines, tail...), w, h)
}

// footer lists the teacher's keys.
func (m *roomTeacher) footer() string {
	var ts []string
	for i, t := range roomToggles(m.f != nil && m.f.RowLocks) {
		if i < len(m.keys.Toggles) {
			ts = append(ts, t.Key)
		}
	}
	return strings.Join(ts, " ") + " toggles · " + footer(m.keys.PastLease, m.keys.Clock, m.keys.Pause, m.keys.End, m.keys.Prev,
		m.keys.Crash, m.keys.Ask, m.keys.Idle, m.keys.Write, m.keys.Reset, m.keys.Quit)
}

// idleWordsOf names an idle limit.
func idleWordsOf(d time.Duration) string {
	if d <= 0 {
		return "off"
	}
	return d.String()
}

// nextIdle moves the idle limit to the next choice.
func (sr *sharedRoom) nextIdle() string {
	now := time.Duration(sr.idle.Load())
	next := idleChoices[0]
	for i, d := range idleChoices {
		if d == now {
			next = idleChoices[(i+1)%len(idleChoices)]
		}
	}
	sr.idle.Store(int64(next))
	if next == 0 {
		return "idle limit off: an idle attendee's worker never crashes"
	}
	return fmt.Sprintf("idle limit %s: an attendee without a key press that long crashes to the room", next)
}
