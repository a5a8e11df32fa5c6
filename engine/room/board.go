package room

import (
	"fmt"
	"strings"

	"leaselab/engine"
)

// The scoreboard: what happened in the room, in words, every word derived from the run — the
// room's ledgers, the provider's own count of its calls, the rows as the database holds them,
// and, when the frame has it, the engine's checks and verdict:
//
//	6 messages, 14 provider calls: PAY-003 was processed by ana and ben at once (leasing off)

// maxBoardLines bounds the lines a scoreboard names one by one; the rest are counted.
const maxBoardLines = 8

// Board is the scoreboard.
type Board struct {
	Headline string
	Lines    []string // one thing that happened each, the most serious first
	// Verdict and Checks are the engine's, when the frame has its summary ("" and nil when
	// not). While messages are left to do, a check that fails only because of them (none lost,
	// a crashed owner's message recovered) is open, not failed, as the lab judges a run that
	// goes on, and the verdict is the one so far.
	Verdict            string
	Passed             bool
	Holds, Open, Fails int
	Checks             []CheckLine
}

// CheckLine is one of the engine's checks as the scoreboard shows it.
type CheckLine struct {
	Name, Detail string
	State        string // "holds", "open", "FAILS", or "aside" (not one of the verdict's)
}

// makeBoard puts f into words.
func makeBoard(f *Frame) *Board {
	calls := f.ProviderCalls
	b := &Board{}
	l := f.Ledger
	var lines []string
	for _, d := range l.Duplicates {
		lines = append(lines, d.Words())
	}
	for _, d := range l.Again {
		lines = append(lines, d.Words())
	}
	for _, v := range l.Violations {
		lines = append(lines, v.violationWords())
	}
	for _, x := range l.Refused {
		lines = append(lines, x.refusedWords())
	}
	for _, rc := range l.Reclaims {
		lines = append(lines, rc.Words())
	}
	for _, a := range l.Absences {
		if !reclaimed(l.Reclaims, a) {
			lines = append(lines, a.Words())
		}
	}
	head := fmt.Sprintf("%s, %s", count(f.Messages, "message"), count(calls, "provider call"))
	switch {
	case len(lines) > 0:
		b.Headline = head + ": " + lines[0]
		lines = lines[1:]
	case calls == 0:
		b.Headline = head + ": nobody has processed anything yet"
	default:
		b.Headline = fmt.Sprintf("%s: %d of %d processed, none by two workers", head, f.Counts.Processed, f.Messages)
	}
	if len(lines) > maxBoardLines {
		lines = append(lines[:maxBoardLines], fmt.Sprintf("… and %d more", len(lines)-maxBoardLines))
	}
	b.Lines = lines
	if f.Summary != nil {
		b.judge(f)
	}
	return b
}

// judge reads the engine's checks into the board.
func (b *Board) judge(f *Frame) {
	s := f.Summary
	left := f.Counts.Pending + f.Counts.Processing
	for _, c := range s.Checks {
		line := CheckLine{Name: c.Name, Detail: c.Detail, State: "holds"}
		switch {
		case !c.Decides:
			line.State = "aside"
		case c.OK:
			b.Holds++
		case left > 0 && unfinished(c, s):
			line.State = "open"
			b.Open++
		default:
			line.State = "FAILS"
			b.Fails++
		}
		b.Checks = append(b.Checks, line)
	}
	switch {
	case left == 0:
		b.Verdict, b.Passed = s.Verdict, s.Passed
	case b.Fails > 0:
		b.Verdict = fmt.Sprintf("so far: %d %s, %d open — %s", b.Fails, plural(b.Fails, "check fails", "checks fail"), b.Open, s.Verdict)
	default:
		b.Verdict, b.Passed = fmt.Sprintf("so far: %d hold, %d open (%d %s left to do)", b.Holds, b.Open, left, plural(left, "message", "messages")), true
	}
}

// unfinished reports whether failing check c can still come to hold as the room goes on.
func unfinished(c engine.Check, s *engine.Summary) bool {
	switch c.ID {
	case engine.CheckNoneLost, engine.CheckRecovered:
		return true
	case engine.CheckProcessedOnce:
		return s.ProcessedMoreThanOnce == 0
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Words is the duplicate as the scoreboard says it.
func (d Duplicate) Words() string {
	who := joinNames(d.Seats)
	if len(d.Seats) == 1 {
		who = d.Seats[0] + " twice (two of " + d.Seats[0] + "'s workers)"
	}
	if d.AtOnce {
		return fmt.Sprintf("%s was processed by %s at once (%s)", d.Key, who, d.Cause)
	}
	return fmt.Sprintf("%s was processed by %s, one after the other: %s", d.Key, who, d.Cause)
}

// Words is the reclaim as the scoreboard says it.
func (rc Reclaim) Words() string {
	if rc.FromAway != "" {
		return fmt.Sprintf("%s: %s's worker crashed holding it (%s) and its lease ran out; %s reclaimed it (lease version %d)",
			rc.Key, rc.From, rc.FromAway, rc.To, rc.Version)
	}
	return fmt.Sprintf("%s: %s's lease ran out; %s reclaimed it (lease version %d)", rc.Key, rc.From, rc.To, rc.Version)
}

func (x Finalize) refusedWords() string {
	guard := "the ownership check"
	if x.Fenced {
		guard = "fencing"
	}
	owner := fmt.Sprintf("%s held it (lease version %d)", x.Owner, x.OwnerVersion)
	if x.Owner == x.Seat {
		owner = fmt.Sprintf("the row is at lease version %d now", x.OwnerVersion)
	}
	return fmt.Sprintf("%s's stale finalize of %s (lease version %d) was refused by %s: %s", x.Worker, x.Key, x.Version, guard, owner)
}

func (x Finalize) violationWords() string {
	why := "the ownership check off"
	if x.Checked && !x.Fenced {
		why = "fencing off: the same name, an older lease version"
	}
	if x.Version == 0 {
		why = "no lease at all"
	}
	return fmt.Sprintf("%s's finalize of %s (lease version %d) wrote over %s's lease version %d (%s): an ownership violation",
		x.Worker, x.Key, x.Version, x.Owner, x.OwnerVersion, why)
}

// Words is the absence as the scoreboard says it.
func (a Absence) Words() string {
	return fmt.Sprintf("%s: %s's worker crashed holding it (%s, lease version %d)", a.Key, a.Seat, a.Why, a.Version)
}

// reclaimed reports whether a's message was reclaimed from its attendee.
func reclaimed(rs []Reclaim, a Absence) bool {
	for _, r := range rs {
		if r.Key == a.Key && r.From == a.Seat {
			return true
		}
	}
	return false
}

// joinNames is "ana", "ana and ben", "ana, ben and carl".
func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return "nobody"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
