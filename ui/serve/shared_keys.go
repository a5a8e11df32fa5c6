package serve

import (
	"github.com/charmbracelet/bubbles/key"

	"leaselab/engine"
)

// The keys of the shared room: an attendee's (their worker's next action, the stale worker's,
// an answer) and the teacher's (what the lab's keys do for one person, for everyone at once).

// seatKeys are an attendee's keys.
type seatKeys struct {
	Step, Finish, Answer, Up, Down, Quit key.Binding
}

func newSeatKeys() seatKeys {
	return seatKeys{
		Step:   key.NewBinding(key.WithKeys(" ", "n"), key.WithHelp("space", "your worker's next action")),
		Finish: key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "your old worker goes on (stale)")),
		Answer: key.NewBinding(key.WithKeys("1", "2", "3", "4", "5", "6"), key.WithHelp("1–6", "answer")),
		Up:     key.NewBinding(key.WithKeys("up", "pgup"), key.WithHelp("↑", "scroll")),
		Down:   key.NewBinding(key.WithKeys("down", "pgdown"), key.WithHelp("↓", "scroll")),
		Quit:   key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "leave (your worker crashes)")),
	}
}

// teacherKeys are the teacher's keys in the shared room.
type teacherKeys struct {
	Toggles                []key.Binding // in the order of roomToggles
	PastLease, Clock       key.Binding
	Pause, End, Reset      key.Binding
	Prev, Next, Crash      key.Binding
	Ask, Type, Idle, Write key.Binding
	Quit, Submit, Cancel   key.Binding
}

func newTeacherKeys(toggles []engine.Toggle) teacherKeys {
	b := func(k, help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(append([]string{k}, keys...)...), key.WithHelp(k, help))
	}
	k := teacherKeys{
		PastLease: b("f", "clock past the earliest lease"),
		Clock:     b("+", "clock +100ms", "="),
		Pause:     b("p", "pause/resume the room"),
		End:       b("e", "end the round: the scoreboard"),
		Reset:     b("R", "reset the outbox (twice)"),
		Prev:      b("up", "choose an attendee"),
		Next:      b("down", "choose an attendee"),
		Crash:     b("x", "crash the chosen attendee's worker"),
		Ask:       b("Q", "ask a question / close it"),
		Type:      b("t", "type a question"),
		Idle:      b("i", "idle limit"),
		Write:     b("w", "write the transcript"),
		Quit:      b("q", "quit this screen", "ctrl+c"),
		Submit:    b("enter", "ask it"),
		Cancel:    b("esc", "cancel"),
	}
	for _, t := range toggles {
		k.Toggles = append(k.Toggles, b(t.Key, t.Help()))
	}
	return k
}

// roomToggles are the toggles the teacher switches for the room: the lab's five, and
// skip-locked on a database with row locks.
func roomToggles(rowLocks bool) []engine.Toggle {
	return labToggles(rowLocks)
}
