package room

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"leaselab/engine/words"
)

// An attendee's name is their SSH user, which is theirs to choose: escapes, bidi overrides, line
// feeds, a thousand characters. It becomes their worker's LockedBy, a column of every screen and
// a word of the scoreboard, so it is escaped (words.Escape: \x1b, \u202e) and bounded.

// MaxNameRunes is the longest name, in runes (escapes included), that a seat keeps.
const MaxNameRunes = 16

// maxUserRunes is how much of an SSH user name is read at all.
const maxUserRunes = 64

// CleanName is the room's name for SSH user user: escaped, at most MaxNameRunes runes, with
// no '#' (the room's later workers of an attendee are "ana#2") and no spaces; "attendee" when
// nothing is left.
func CleanName(user string) string {
	if utf8.RuneCountInString(user) > maxUserRunes {
		user = string([]rune(user)[:maxUserRunes])
	}
	user = strings.TrimSpace(user)
	user = strings.Map(func(c rune) rune {
		if c == '#' || c == ' ' || c == '\t' {
			return '_'
		}
		return c
	}, user)
	name := words.Escape(user)
	if utf8.RuneCountInString(name) > MaxNameRunes {
		name = string([]rune(name)[:MaxNameRunes])
	}
	if name == "" {
		return "attendee"
	}
	return name
}

// suffixed is name made unique with n: "ana-2", shortened so that it stays within MaxNameRunes.
func suffixed(name string, n int) string {
	suffix := fmt.Sprintf("-%d", n)
	if r := []rune(name); len(r)+len(suffix) > MaxNameRunes {
		name = string(r[:MaxNameRunes-len(suffix)])
	}
	return name + suffix
}
