package store

import (
	"errors"
	"fmt"
	"strings"
)

// The rule every backend follows before it empties or rebuilds a database that already exists:
// rows are deleted only when the user asked for it (--reset). Each backend counts what its
// database holds into a Contents and asks MayReset; the wording of the refusal is the same for
// all of them.

// ErrHoldsRows means the database holds rows, and emptying it was not allowed; nothing was changed.
var ErrHoldsRows = errors.New("the database holds rows")

// Contents is what a leaselab database holds: what emptying it would delete.
type Contents struct {
	Payments int // rows of Payments
	Messages int // rows of OutboxMessages
	// LiveLeases counts the messages Processing under a lease that had not ended when they
	// were counted: some worker may be working on them right now.
	LiveLeases int
}

// Empty reports whether there is nothing to lose.
func (c Contents) Empty() bool { return c.Payments == 0 && c.Messages == 0 }

// String says what the database holds, e.g. "50 messages, 2 under a live lease".
func (c Contents) String() string {
	count := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	var parts []string
	switch {
	case c.Payments == c.Messages:
		parts = append(parts, count(c.Messages, "message"))
	case c.Messages == 0:
		parts = append(parts, count(c.Payments, "payment"))
	default:
		parts = append(parts, count(c.Messages, "message"), count(c.Payments, "payment"))
	}
	if c.LiveLeases > 0 {
		parts = append(parts, fmt.Sprintf("%d under a live lease", c.LiveLeases))
	}
	return strings.Join(parts, ", ")
}

// HoldsRowsError is MayReset's refusal: it says what the database holds and the flag that
// allows emptying it. It matches ErrHoldsRows.
type HoldsRowsError struct {
	Contents Contents
	// Older is the schema version of an older leaselab database that would be rebuilt, or 0.
	Older int
}

func (e *HoldsRowsError) Error() string {
	what := "holds " + e.Contents.String()
	if e.Older != 0 {
		what = fmt.Sprintf("is a leaselab database of schema %d (this leaselab uses %d) and holds %s", e.Older, schemaVersion, e.Contents)
	}
	hint := "pass --reset to delete them and start again"
	if e.Contents.LiveLeases > 0 {
		hint = "some worker may be working on it; pass --reset to delete them and start again"
	}
	return what + ": " + hint
}

// Is makes errors.Is(err, ErrHoldsRows) true.
func (e *HoldsRowsError) Is(target error) bool { return target == ErrHoldsRows }

// MayReset is the rule: a database that holds rows may be emptied (or rebuilt, when older is the
// version of an older leaselab schema, else 0) only with reset. It returns nil when that is
// allowed, or a *HoldsRowsError.
func MayReset(held Contents, older int, reset bool) error {
	if held.Empty() || reset {
		return nil
	}
	return &HoldsRowsError{Contents: held, Older: older}
}
