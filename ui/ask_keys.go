package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// askKeys are the keys of an open question: the mode in which every other key waits for the
// answer. Only these act then; the lab's q and ? keep their meaning. The answers are capitals
// only: a lower-case a or b is the atomic claim's or step back's key, and waits with the rest
// (a key never does what another label says).
type askKeys struct {
	Answer key.Binding // A the first answer, B the second, …
	Skip   key.Binding
	Help   key.Binding
	Quit   key.Binding
}

// defaultAskKeys returns the question's keys.
func defaultAskKeys() askKeys {
	k := DefaultKeyMap()
	return askKeys{
		Answer: key.NewBinding(key.WithKeys("A", "B", "C", "D"), key.WithHelp("A–D", "answer it, and the step runs")),
		Skip:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "skip it: the step runs, unscored")),
		Help:   k.Help,
		Quit:   k.Quit,
	}
}

// letters are the answer keys' names, in the order of the answers: "A", "B", …
func (k askKeys) letters() []string { return k.Answer.Keys()[:maxAnswerKeys] }

// ShortHelp is the question's keys for the footer (help.KeyMap).
func (k askKeys) ShortHelp() []key.Binding { return []key.Binding{k.Answer, k.Skip} }

// footItems are the footer while a question with n answers is open: only the keys that act.
func (k askKeys) footItems(n int) []footItem {
	answer := k.Answer
	answer.SetHelp(strings.Join(k.letters()[:n], " "), "answer")
	return []footItem{foot(answer, "answer", 0), foot(k.Skip, "skip the question", 0),
		foot(k.Help, "keys", 0), foot(k.Quit, "quit", 1)}
}

// FullHelp is the question's keys for the ? screen (help.KeyMap).
func (k askKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Answer, k.Skip, k.Help, k.Quit}}
}
