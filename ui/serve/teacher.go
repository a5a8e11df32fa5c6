package serve

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/x/ansi"

	"leaselab/engine"
	"leaselab/engine/words"
	"leaselab/ui"
	"leaselab/ui/common"
)

// The teacher's table: a connection authenticated with one of Config.TeacherKeys sees every
// open lab — who, from where, which scenario, how many steps, the toggles, the verdict so far,
// the time since the last key — and can offer a scenario to every lab.

// teacherEvery is how often the table is read again.
const teacherEvery = time.Second

// isTeacher reports whether the session authenticated with a teacher's key.
func (s *Server) isTeacher(sess ssh.Session) bool {
	pk := sess.PublicKey()
	if pk == nil {
		return false
	}
	for _, k := range s.cfg.TeacherKeys {
		if ssh.KeysEqual(pk, k) {
			return true
		}
	}
	return false
}

// serveTeacher runs the teacher's table for the session's lifetime.
func (s *Server) serveTeacher(sess ssh.Session, next ssh.Handler) {
	ss := s.enter(sess, func(ss *session) { ss.teacher = true })
	if ss == nil {
		return
	}
	defer s.unregister(ss)
	s.log.Printf("%s %s: the teacher's table", ss.user, ss.addr)
	sess.Context().SetValue(sessionKey{}, ss)
	next(sess) // no idle timeout: the table is watched, not typed at
	ss.close()
	if endReason(ss.reason.Load()) == endShutdown {
		fmt.Fprintln(sess, "leaselab: the server is shutting down.")
	}
}

// teacherProgram builds the teacher's table for the session.
func (s *Server) teacherProgram(sess ssh.Session, ss *session) *tea.Program {
	pty, _, _ := sess.Pty()
	r := sessionRenderer(sess)
	m := teacherModel{
		sessions: s.Sessions, offer: func(name string) int { return s.Offer(name, "the teacher") },
		scenarios: s.cfg.Scenarios, max: s.cfg.MaxSessions, now: s.cfg.Now,
		bold: r.NewStyle().Bold(true), subtle: r.NewStyle().Faint(true),
	}
	if s.cfg.Theme == common.ThemeProjector {
		m.subtle = r.NewStyle() // faint text is lost in a projector's beam
	}
	m.width, m.height, _ = ui.FitWindow(pty.Window.Width, pty.Window.Height)
	p := tea.NewProgram(m, tea.WithInput(keyCounter{sess, ss, s.cfg.Now}), tea.WithOutput(sess),
		tea.WithAltScreen(), tea.WithContext(ss.ctx), tea.WithoutSignalHandler())
	ss.mu.Lock()
	ss.tea = p
	ss.mu.Unlock()
	return p
}

// teacherModel is the teacher's table.
type teacherModel struct {
	sessions  func() []Info
	offer     func(name string) int
	scenarios []string
	max       int
	now       func() time.Time

	width, height int
	bold, subtle  lipgloss.Style
	rows          []Info
	at            time.Time
	pick          int    // the scenario s offers
	note          string // what the last key did
}

type (
	tableMsg struct {
		rows []Info
		at   time.Time
	}
	offeredMsg struct {
		name string
		n    int
	}
)

func (m teacherModel) read() tea.Msg { return tableMsg{rows: m.sessions(), at: m.now()} }

// Init reads the table.
func (m teacherModel) Init() tea.Cmd { return m.read }

// Update handles one message.
func (m teacherModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height, _ = ui.FitWindow(msg.Width, msg.Height)
	case tableMsg:
		m.rows, m.at = msg.rows, msg.at
		return m, tea.Tick(teacherEvery, func(time.Time) tea.Msg { return m.read() })
	case offeredMsg:
		m.note = fmt.Sprintf("offered %s to %d labs: each attendee opens it with O, or keeps working", msg.name, msg.n)
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "ctrl+c":
			return m, tea.Quit
		case "tab", "right":
			m.pick = (m.pick + 1) % len(m.scenarios)
		case "shift+tab", "left":
			m.pick = (m.pick + len(m.scenarios) - 1) % len(m.scenarios)
		case "s":
			name, offer := m.scenarios[m.pick], m.offer
			return m, func() tea.Msg { return offeredMsg{name: name, n: offer(name)} }
		}
	}
	return m, nil
}

// View draws the table, never wider or taller than the window.
func (m teacherModel) View() string {
	w, h := m.width, m.height
	if w <= 0 {
		w = 120
	}
	if h <= 0 {
		h = 30
	}
	lines := []string{
		m.bold.Render(fmt.Sprintf("LEASELAB — the teacher's table: %d of %d labs open", len(m.rows), m.max)),
		fmt.Sprintf("offer: %s   (tab/←→ choose, s offers it to every lab, q quits)", m.bold.Render(m.scenarios[m.pick])),
		"",
		m.bold.Render(row("WHO", "FROM", "SCENARIO", "STEPS", "IDLE", "TOGGLES", "VERDICT SO FAR")),
	}
	for i, in := range m.rows {
		if len(lines) >= h-3 {
			lines = append(lines, m.subtle.Render(fmt.Sprintf("… and %d more", len(m.rows)-i)))
			break
		}
		st := in.Status
		verdict, steps := st.Verdict, fmt.Sprint(st.Steps)
		if st.Free {
			// A free run takes no steps: what it is doing is its progress.
			what := "free-running"
			if st.Messages > 0 {
				what += fmt.Sprintf(", %d of %d processed", st.Processed, st.Messages)
			}
			if st.Held {
				what += ", held back by the room"
			}
			verdict += " (" + what + ")"
		}
		if st.Offer != "" {
			verdict += " · offered " + st.Offer
		}
		idle := m.at.Sub(in.LastKey).Truncate(time.Second)
		lines = append(lines, row(clean(in.User), in.Addr, in.Scenario, steps, idle.String(), toggleLetters(st), verdict))
	}
	if len(m.rows) == 0 {
		lines = append(lines, m.subtle.Render("no lab is open yet"))
	}
	lines = append(lines, "", m.subtle.Render(toggleLegend(m.rows)))
	if m.note != "" {
		lines = append(lines, m.note)
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "…")
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return strings.Join(lines, "\n")
}

// row lays out one line of the table; the verdict, last, is what a narrow window cuts.
func row(who, from, scenario, steps, idle, toggles, verdict string) string {
	return fmt.Sprintf("%-12.12s %-21.21s %-15.15s %5s %6s  %-7s  %s", who, from, scenario, steps, idle, toggles, verdict)
}

// labToggles are the toggles a lab has: every backend's, and on a database with row locks
// (PostgreSQL) that database's too, in the order of engine.AllToggleNames.
func labToggles(rowLocks bool) []engine.Toggle {
	var ts []engine.Toggle
	for _, name := range engine.AllToggleNames() {
		if t, _ := engine.LookupToggle(name); t.Has(rowLocks) {
			ts = append(ts, t)
		}
	}
	return ts
}

// toggleLetters abbreviates a lab's toggles to their letters, "·" for one that is off: "L·OFH"
// (a lab on PostgreSQL has skip-locked's S too); "-" before the lab has read its settings.
func toggleLetters(st ui.LabStatus) string {
	if !st.Framed {
		return "-"
	}
	var b strings.Builder
	for _, t := range labToggles(st.RowLocks) {
		if t.Of(st.Settings) {
			b.WriteString(t.Letter)
		} else {
			b.WriteString("·")
		}
	}
	return b.String()
}

// toggleLegend names the letters of the toggles the labs in rows have.
func toggleLegend(rows []Info) string {
	rowLocks := slices.ContainsFunc(rows, func(in Info) bool { return in.Status.RowLocks })
	var parts []string
	for _, t := range labToggles(rowLocks) {
		parts = append(parts, t.Letter+" "+t.Words)
	}
	return "toggles: " + strings.Join(parts, ", ") + " (· off)"
}

// clean keeps an SSH user name printable: it is the attendee's to choose, escapes, bidi
// overrides and line feeds included; words.Escape shows them as \x1b, \u202e, \x0a.
func clean(s string) string { return words.Escape(s) }
