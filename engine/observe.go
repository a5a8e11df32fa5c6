package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A question is graded against what its step did, never against the script's expected path: it
// names an Observation ("observe: claim by Worker-B"), which the engine reads from the step's
// events and the rows once the step is over (or, for a question about the end, once the run
// is), and each answer says which value of it makes it right ("if blocked: blocked"). A toggle
// flipped before the step, during it, or after the question for one about the end, changes what
// happened, and so the right answer with it.

// Observation is what a question asks about, as the engine reads it from the run.
type Observation struct {
	Line  int
	Text  string // as written: "claim by Worker-B", "status checks of PAY-001 at the end"
	kind  obsKind
	arg   string // the worker or the key it names
	AtEnd bool   // read once the run is over (the script done, or the watchdog's end)
	// Ifs are the answers by value, in the file's order: the first that matches decides.
	Ifs []IfAnswer
}

// IfAnswer is one "if VALUE: ANSWER" line: when the observation reads VALUE, ANSWER is right,
// and Because (the "because:" line after it) says why.
type IfAnswer struct {
	Line    int
	Value   string // as written: "took PAY-001", "< 40", "1..10", "nothing"
	Answer  int    // an index of the question's answers
	Because string
}

type obsKind int

const (
	obsClaim     obsKind = iota // claim by WORKER: what the worker's first claim of the step got
	obsLoaded                   // rows loaded by WORKER: how many its load of the step read
	obsFinalize                 // finalize by WORKER: committed, violation or rejected
	obsRow                      // row KEY: the row's Status (and owner) after the step
	obsVersion                  // lease version of KEY: the row's LeaseVersion after the step
	obsFinalizer                // finalizer of KEY: the last worker whose finalize wrote it
	obsChecks                   // status checks: the provider's status checks, all keys
	obsChecksOf                 // status checks of KEY
	obsFailures                 // provider failures: the provider calls that failed
	obsTwoOwners                // messages processed by two owners at once (Repeats)
	obsEnd                      // end of KEY: processed, dead-lettered, watchdog or unfinished
)

// obsForm is one form an observation may take: its words before the argument, whether it takes
// a worker or a key, whether its value is a number, whether it can only be read at the end,
// and the values a word observation can have (a worker or a key stands in for its argument).
type obsForm struct {
	kind    obsKind
	prefix  string
	arg     string // "worker", "key" or ""
	number  bool
	endOnly bool
	values  []string
}

var obsForms = []obsForm{
	{kind: obsClaim, prefix: "claim by ", arg: "worker",
		values: []string{"took KEY", "reclaimed KEY", "selected KEY", "loaded", "loaded nothing", "blocked", "waited", "backoff", "nothing"}},
	{kind: obsLoaded, prefix: "rows loaded by ", arg: "worker", number: true},
	{kind: obsFinalize, prefix: "finalize by ", arg: "worker", values: []string{"committed", "violation", "rejected", "none"}},
	{kind: obsRow, prefix: "row ", arg: "key",
		values: []string{StatusPending, StatusProcessing + " by WORKER", StatusProcessed, StatusDeadLettered}},
	{kind: obsVersion, prefix: "lease version of ", arg: "key", number: true},
	{kind: obsFinalizer, prefix: "finalizer of ", arg: "key", values: []string{"WORKER", "nobody"}},
	{kind: obsChecksOf, prefix: "status checks of ", arg: "key", number: true, endOnly: true},
	{kind: obsChecks, prefix: "status checks", number: true, endOnly: true},
	{kind: obsFailures, prefix: "provider failures", number: true, endOnly: true},
	{kind: obsTwoOwners, prefix: "messages processed by two owners at once", number: true, endOnly: true},
	{kind: obsEnd, prefix: "end of ", arg: "key", endOnly: true, values: []string{"processed", "dead-lettered", "watchdog", "unfinished"}},
}

// atTheEnd marks an observation read once the run is over.
const atTheEnd = " at the end"

// ObservationForms lists the forms an "observe:" line may take, for an error message and the
// docs.
func ObservationForms() []string {
	var out []string
	for _, f := range obsForms {
		s := f.prefix
		switch f.arg {
		case "worker":
			s += "WORKER"
		case "key":
			s += "KEY"
		}
		if f.endOnly {
			s += atTheEnd
		}
		out = append(out, s)
	}
	return out
}

// ParseObservation reads an "observe:" line's text. A worker is named as the script names it
// ("Worker-B" or "B"), a key as the outbox does ("PAY-001").
func ParseObservation(text string) (*Observation, error) {
	o := &Observation{Text: text}
	rest, atEnd := strings.CutSuffix(strings.TrimSpace(text), atTheEnd)
	o.AtEnd = atEnd
	for _, f := range obsForms {
		arg, ok := strings.CutPrefix(rest, f.prefix)
		if !ok || (f.arg == "") != (arg == "") || strings.Contains(arg, " ") {
			continue
		}
		if f.endOnly && !atEnd {
			return nil, fmt.Errorf("%q is only known once the run is over: write %q", rest, rest+atTheEnd)
		}
		o.kind, o.arg = f.kind, arg
		if f.arg == "worker" {
			o.arg = WorkerName(arg)
		}
		return o, nil
	}
	return nil, fmt.Errorf("observe %q: want one of: %s", text, strings.Join(ObservationForms(), "; "))
}

func (o *Observation) form() obsForm {
	for _, f := range obsForms {
		if f.kind == o.kind {
			return f
		}
	}
	return obsForm{}
}

// CheckValue says whether v is a value the observation can read: a number or a range ("2",
// "< 40", ">= 40", "1..10") for a count; one of its words for the others ("took PAY-001",
// "blocked", "Processing by Worker-A", "Worker-B").
func (o *Observation) CheckValue(v string) error {
	f := o.form()
	if f.number {
		if _, err := parseRange(v); err != nil {
			return fmt.Errorf("%q: %w", o.Text, err)
		}
		return nil
	}
	for _, w := range f.values {
		if valueFits(w, v) {
			return nil
		}
	}
	return fmt.Errorf("%q reads one of: %s; not %q", o.Text, strings.Join(f.values, ", "), v)
}

// valueFits reports whether v has the shape of the vocabulary's word w, where WORKER and KEY
// stand for a name.
func valueFits(w, v string) bool {
	for _, ph := range []string{"WORKER", "KEY"} {
		if pre, ok := strings.CutSuffix(w, ph); ok {
			name, ok := strings.CutPrefix(v, pre)
			return ok && name != "" && !strings.Contains(name, " ")
		}
	}
	return w == v
}

// numRange is a count's range: from lo to hi, inclusive.
type numRange struct{ lo, hi int }

// parseRange reads "N", "< N", "<= N", "> N", ">= N" or "N..M".
func parseRange(v string) (numRange, error) {
	const inf = int(^uint(0) >> 1)
	num := func(s string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return 0, fmt.Errorf("want a count: N, < N, <= N, > N, >= N or N..M, not %q", v)
		}
		return n, nil
	}
	for _, op := range []string{"<=", ">=", "<", ">"} {
		if rest, ok := strings.CutPrefix(v, op); ok {
			n, err := num(rest)
			switch {
			case err != nil:
				return numRange{}, err
			case op == "<=":
				return numRange{0, n}, nil
			case op == ">=":
				return numRange{n, inf}, nil
			case op == "<":
				return numRange{0, n - 1}, nil
			}
			return numRange{n + 1, inf}, nil
		}
	}
	if a, b, ok := strings.Cut(v, ".."); ok {
		lo, err := num(a)
		if err != nil {
			return numRange{}, err
		}
		hi, err := num(b)
		if err != nil || hi < lo {
			return numRange{}, fmt.Errorf("want a range N..M with N <= M, not %q", v)
		}
		return numRange{lo, hi}, nil
	}
	n, err := num(v)
	return numRange{n, n}, err
}

// Observed is a question's answer as the run gave it: what its observation read, and which of
// its answers that makes right. Script.Observed and Frame.Observed carry it; the lab grades an
// answer with it, and a test of every path checks that the lab did.
type Observed struct {
	Step  int // the script step the question comes before (an index of Scenario.Steps)
	Line  int // the question's line
	Known bool
	// Waiting says, while the answer is not known, when it will be: "once the step is over",
	// "at the end of the run".
	Waiting string
	Value   string // what the observation read: "nothing", "2", "Processing by Worker-B"
	Words   string // the observation and its value: "claim by Worker-B: nothing"
	Right   int    // the answer that value makes right; -1 when none of them describes it
	Because string // why, for that answer
	// Legacy: the question has no observation (a file written before it could name one): it is
	// graded as before, by its "when" rules over the settings its step started under.
	Legacy bool
	When   string // Legacy: the settings of the rule that decided
}

// observation reads what o names from a step's events (those from its start: all of the run's
// after it, for one at the end), the rows after it, and the summary at the end (nil for a
// step's own). ok is false when the run did not do what the observation reads (a claim by a
// worker that loaded instead): none of the answers applies.
func (o *Observation) read(events []Event, rows []Row, sum *Summary) (string, bool) {
	row := func() (Row, bool) {
		for _, r := range rows {
			if r.IdempotencyKey == o.arg {
				return r, true
			}
		}
		return Row{}, false
	}
	switch o.kind {
	case obsClaim:
		for _, e := range events {
			if e.Worker != o.arg {
				continue
			}
			if v := claimValue(e); v != "" {
				return v, true
			}
		}
	case obsLoaded:
		for _, e := range events {
			if e.Worker == o.arg && e.Kind == EvLoad {
				return strconv.FormatInt(e.Rows, 10), true
			}
		}
	case obsFinalize:
		for _, e := range events {
			if e.Worker == o.arg && e.Kind == EvFinalize {
				switch e.Outcome {
				case OutcomeCommitted, OutcomeViolation, OutcomeRejected:
					return map[string]string{OutcomeCommitted: "committed", OutcomeViolation: "violation", OutcomeRejected: "rejected"}[e.Outcome], true
				}
			}
		}
	case obsRow:
		if r, ok := row(); ok {
			if r.Status == StatusProcessing {
				return StatusProcessing + " by " + r.LockedBy, true
			}
			return r.Status, true
		}
	case obsVersion:
		if r, ok := row(); ok {
			return strconv.FormatInt(r.LeaseVersion, 10), true
		}
	case obsFinalizer:
		who := "nobody"
		for _, e := range events {
			if e.Kind == EvFinalize && e.Key == o.arg && (e.Outcome == OutcomeCommitted || e.Outcome == OutcomeViolation) {
				who = e.Worker
			}
		}
		return who, true
	case obsChecks:
		return strconv.Itoa(sum.StatusChecks), true
	case obsChecksOf:
		return strconv.Itoa(sum.StatusChecksByKey[o.arg]), true
	case obsFailures:
		return strconv.Itoa(sum.ProviderFailures), true
	case obsTwoOwners:
		return strconv.Itoa(sum.ProcessedByTwoOwners), true
	case obsEnd:
		r, ok := row()
		switch {
		case !ok:
		case r.Status == StatusProcessed:
			return "processed", true
		case r.Status == StatusDeadLettered:
			return "dead-lettered", true
		case sum.WatchdogEnded:
			return "watchdog", true
		default:
			return "unfinished", true
		}
	}
	return "", false
}

// claimValue is what a claim event got, in the words of "claim by": "" for an event that is
// not a claim's.
func claimValue(e Event) string {
	switch {
	case e.Kind == EvClaim && e.Outcome == OutcomeReclaimed:
		return "reclaimed " + e.Key
	case e.TakesOver(), e.Kind == EvLock && e.Outcome == OutcomeLocked:
		return "took " + e.Key
	case e.Kind == EvSelect && e.Outcome == OutcomeSelected:
		return "selected " + e.Key
	case e.Kind == EvLoad && e.Outcome == OutcomeLoaded:
		return "loaded"
	case e.Kind == EvLoad:
		return "loaded nothing" // a naive load (no claim) that found no Pending row
	case e.Wait > 0 && (e.Kind == EvClaim || e.Kind == EvTake):
		return "waited"
	case e.BlockedByLease(), e.Kind == EvTake && e.Outcome == OutcomeBlocked:
		return "blocked"
	case e.WaitsForBackoff():
		return "backoff"
	case e.Kind == EvClaim, e.Kind == EvSelect:
		return "nothing" // empty, a lost race, a select that found no row
	}
	return ""
}

// answer is the answer value v makes right, and why; -1 when none does.
func (o *Observation) answer(v string) (int, string) {
	for _, a := range o.Ifs {
		if matches(a.Value, v) {
			return a.Answer, a.Because
		}
	}
	return -1, ""
}

// matches reports whether the value read, v, is what pattern names: the same words, or a count
// in its range.
func matches(pattern, v string) bool {
	if r, err := parseRange(pattern); err == nil {
		n, err := strconv.Atoi(v)
		return err == nil && n >= r.lo && n <= r.hi
	}
	return pattern == v
}

// needsRows reports whether reading the observation needs the outbox's rows.
func (o *Observation) needsRows() bool {
	return slices.Contains([]obsKind{obsRow, obsVersion, obsEnd}, o.kind)
}
