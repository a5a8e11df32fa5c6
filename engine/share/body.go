package share

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"leaselab/engine"
	"leaselab/engine/explore"
)

// The body of a version 1 code, before it is deflated, is a sequence of unsigned varints,
// signed (zigzag) varints and strings (a varint length, then the bytes):
//
//	scenario   varint len<<1 | isFile, then the lesson's name or the file's text
//	overrides  varint count, then each: varint tag, then its value (tag* below)
//	found      varint number of checks (0: none), each a name; varint moves, each a
//	           transition (kind, worker, then an action for Act or a time for Clock)
//	moves      varint number of groups, each: byte op<<4 | arg, then what the op needs
//
// A name (a toggle, a check, an action) is a varint: i+1 for the i-th of this package's own
// table of names, or 0 followed by the name as a string, so that a name added later needs no
// new version. The tables only ever grow at their ends.

// toggleNames, actionNames and checkNames are the code's own vocabulary: never reordered.
var (
	toggleNames = []string{engine.ToggleLeasing, engine.ToggleAtomicClaim, engine.ToggleOwnershipCheck, engine.ToggleFencing,
		engine.ToggleHeartbeat, engine.ToggleSkipLocked, engine.ToggleBackoff, engine.ToggleDeadLetter, engine.ToggleGuardedRescue,
		engine.ToggleDBClock, engine.ToggleProviderFencing, engine.ToggleStrictExpiry}
	actionNames = []string{"load", "claim", "select", "take", "check", "renew", "finalize", "lock"}
	checkNames  = []string{engine.CheckOneOwner, engine.CheckWrittenOnce, engine.CheckNoViolations, engine.CheckNoDuplicates,
		engine.CheckOneCreation, engine.CheckProviderTxIDs, engine.CheckNoUndoneFinish, engine.CheckNoEarlyReclaim}
)

// The overrides' tags.
const (
	tagWorkers = iota + 1
	tagMessages
	tagLease
	tagSeed
	tagFailRate
	tagMaxAttempts
	tagSkew
	tagToggle
)

// The moves' ops (the high four bits of a group's first byte). A group of CmdNext or CmdFinish
// is a run of them: arg+1 of them, or with arg 15 a varint count after.
const (
	opNext = iota
	opStepWorker
	opCrash
	opRestart
	opPause
	opToggle
	opClock
	opPastLease
	opFinish
	opRedrive
)

// escape is the arg that says a varint follows.
const escape = 15

// maxItems bounds every count a body declares, before anything is allocated for it.
const maxItems = 1 << 16

type writer struct{ b []byte }

func (w *writer) uint(v uint64)  { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) int(v int64)    { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) bytes(p []byte) { w.uint(uint64(len(p))); w.b = append(w.b, p...) }
func (w *writer) str(s string)   { w.bytes([]byte(s)) }

func (w *writer) name(table []string, s string) {
	if i := slices.Index(table, s); i >= 0 {
		w.uint(uint64(i + 1))
		return
	}
	w.uint(0)
	w.str(s)
}

// ms is a time or a duration on the scenario clock, in whole milliseconds.
func ms(d time.Duration) int64 { return d.Milliseconds() }

func (c Code) marshal() ([]byte, error) {
	w := &writer{}
	switch {
	case c.Lesson != "" && c.File != nil:
		return nil, errors.New("share: a code carries a lesson's name or a file, not both")
	case c.Lesson != "":
		w.uint(uint64(len(c.Lesson)) << 1)
		w.b = append(w.b, c.Lesson...)
	default:
		w.uint(uint64(len(c.File))<<1 | 1)
		w.b = append(w.b, c.File...)
	}
	w.overrides(c.Overrides)
	if err := w.found(c.Found); err != nil {
		return nil, err
	}
	if err := w.moves(c.Moves); err != nil {
		return nil, err
	}
	return w.b, nil
}

func (w *writer) overrides(o engine.Overrides) {
	var items writer
	n := 0
	item := func(tag int) { items.uint(uint64(tag)); n++ }
	if o.Workers != 0 {
		item(tagWorkers)
		items.uint(uint64(o.Workers))
	}
	if o.Messages != 0 {
		item(tagMessages)
		items.uint(uint64(o.Messages))
	}
	if o.Lease != 0 {
		item(tagLease)
		items.int(int64(o.Lease))
	}
	if o.Seed != nil {
		item(tagSeed)
		items.int(*o.Seed)
	}
	if o.FailRate != nil {
		item(tagFailRate)
		items.b = binary.BigEndian.AppendUint64(items.b, math.Float64bits(*o.FailRate))
	}
	if o.MaxAttempts != 0 {
		item(tagMaxAttempts)
		items.uint(uint64(o.MaxAttempts))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Skew)) {
		item(tagSkew)
		items.str(k)
		items.int(int64(o.Skew[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Toggles)) {
		item(tagToggle)
		items.name(toggleNames, k)
		items.uint(boolBit(o.Toggles[k]))
	}
	w.uint(uint64(n))
	w.b = append(w.b, items.b...)
}

func (w *writer) found(f *Found) error {
	if f == nil {
		w.uint(0)
		return nil
	}
	if len(f.Checks) == 0 {
		return errors.New("share: a counterexample names the checks it broke")
	}
	w.uint(uint64(len(f.Checks)))
	for _, id := range f.Checks {
		w.name(checkNames, id)
	}
	w.uint(uint64(len(f.Schedule)))
	for _, t := range f.Schedule {
		if t.Kind < 0 || t.Kind > 7 || t.Worker < 0 {
			return fmt.Errorf("share: transition %s: not one a code can carry", t)
		}
		head := byte(t.Kind) << 5
		if t.Worker < 31 {
			w.b = append(w.b, head|byte(t.Worker))
		} else {
			w.b = append(w.b, head|31)
			w.uint(uint64(t.Worker))
		}
		switch t.Kind {
		case explore.Act:
			w.name(actionNames, t.Action.String())
		case explore.Clock:
			w.int(ms(t.At.Sub(engine.Epoch)))
		}
	}
	return nil
}

func (w *writer) moves(cmds []engine.Command) error {
	var groups writer
	n := 0
	group := func(op int, arg int) {
		n++
		if arg < escape {
			groups.b = append(groups.b, byte(op<<4|arg))
			return
		}
		groups.b = append(groups.b, byte(op<<4|escape))
		groups.uint(uint64(arg))
	}
	for i := 0; i < len(cmds); {
		switch c := cmds[i].(type) {
		case engine.CmdNext, engine.CmdFinish:
			j := i
			for j < len(cmds) && cmds[j] == cmds[i] {
				j++
			}
			op := opNext
			if _, fin := c.(engine.CmdFinish); fin {
				op = opFinish
			}
			if k := j - i; k-1 < escape {
				group(op, k-1)
			} else {
				n++
				groups.b = append(groups.b, byte(op<<4|escape)) // then the whole count
				groups.uint(uint64(k))
			}
			i = j
			continue
		case engine.CmdStepWorker, engine.CmdCrash, engine.CmdRestart, engine.CmdPause:
			if w := c.Info().Worker; w < 0 {
				return fmt.Errorf("move %d names worker %d: %w", i+1, w, ErrCannotShare)
			}
		}
		switch c := cmds[i].(type) {
		case engine.CmdStepWorker:
			group(opStepWorker, c.Worker)
		case engine.CmdCrash:
			group(opCrash, c.Worker)
		case engine.CmdRestart:
			group(opRestart, c.Worker)
		case engine.CmdPause:
			group(opPause, c.Worker)
		case engine.CmdToggle:
			group(opToggle, 0)
			groups.name(toggleNames, c.Name)
		case engine.CmdClock:
			group(opClock, 0)
			groups.int(ms(c.Delta))
		case engine.CmdPastLease:
			group(opPastLease, 0)
		case engine.CmdRedrive:
			group(opRedrive, 0)
			groups.str(c.Key)
		case engine.CmdFree:
			return fmt.Errorf("move %d ran the workers free on goroutines, in an order no replay can repeat: %w", i+1, ErrCannotShare)
		default:
			return fmt.Errorf("move %d (%T): %w", i+1, c, ErrCannotShare)
		}
		i++
	}
	w.uint(uint64(n))
	w.b = append(w.b, groups.b...)
	return nil
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// reader reads a body; its first error sticks, and every read after it returns zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) uint() uint64 { return number(r, binary.Uvarint) }

func (r *reader) int() int64 { return number(r, binary.Varint) }

// number reads one varint with decode (binary.Uvarint or binary.Varint): the signed and the
// unsigned reads fail and advance alike.
func number[T uint64 | int64](r *reader, decode func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := decode(r.b)
	if n <= 0 {
		r.fail("it ends in the middle of a number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items, each at least one byte long.
func (r *reader) count(what string) int {
	v := r.uint()
	if v > maxItems || v > uint64(len(r.b)) {
		r.fail("it declares %d %s, more than it holds", v, what)
		return 0
	}
	return int(v)
}

func (r *reader) take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail("it ends in the middle of a text")
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) byte() byte {
	if p := r.take(1); len(p) == 1 {
		return p[0]
	}
	return 0
}

func (r *reader) str() string { return string(r.take(r.uint())) }

func (r *reader) name(table []string, what string) string {
	i := r.uint()
	switch {
	case r.err != nil:
		return ""
	case i == 0:
		return r.str()
	case i > uint64(len(table)):
		r.fail("it names %s number %d, which this leaselab does not know", what, i)
		return ""
	}
	return table[i-1]
}

func (c *Code) unmarshal(b []byte) error {
	r := &reader{b: b}
	head := r.uint()
	text := r.take(head >> 1)
	if head&1 == 0 {
		c.Lesson = string(text)
		if r.err == nil && c.Lesson == "" {
			r.fail("it names no lesson")
		}
	} else {
		c.File = text
	}
	r.overrides(&c.Overrides)
	c.Found = r.found()
	c.Moves = r.moves()
	if r.err == nil && len(r.b) > 0 {
		r.fail("%d bytes follow its end", len(r.b))
	}
	return r.err
}

func (r *reader) overrides(o *engine.Overrides) {
	n := r.count("settings")
	for i := 0; i < n && r.err == nil; i++ {
		switch tag := r.uint(); tag {
		case tagWorkers:
			o.Workers = r.smallInt("workers")
		case tagMessages:
			o.Messages = r.smallInt("messages")
		case tagLease:
			o.Lease = time.Duration(r.int())
		case tagSeed:
			v := r.int()
			o.Seed = &v
		case tagFailRate:
			p := r.take(8)
			if len(p) == 8 {
				v := math.Float64frombits(binary.BigEndian.Uint64(p))
				o.FailRate = &v
			}
		case tagMaxAttempts:
			o.MaxAttempts = r.smallInt("max-attempts")
		case tagSkew:
			k, d := r.str(), time.Duration(r.int())
			if o.Skew == nil {
				o.Skew = map[string]time.Duration{}
			}
			o.Skew[k] = d
		case tagToggle:
			k := r.name(toggleNames, "toggle")
			v := r.uint()
			if v > 1 {
				r.fail("toggle %s is neither on nor off", k)
			}
			if o.Toggles == nil {
				o.Toggles = map[string]bool{}
			}
			o.Toggles[k] = v == 1
		default:
			r.fail("it holds a setting of kind %d, which this leaselab does not know", tag)
		}
	}
}

// smallInt reads a count that an int holds on every platform.
func (r *reader) smallInt(what string) int {
	v := r.uint()
	if v > math.MaxInt32 {
		r.fail("%s %d: too large", what, v)
		return 0
	}
	return int(v)
}

func (r *reader) found() *Found {
	n := r.count("checks")
	if n == 0 || r.err != nil {
		return nil
	}
	f := &Found{}
	for i := 0; i < n && r.err == nil; i++ {
		f.Checks = append(f.Checks, r.name(checkNames, "check"))
	}
	m := r.count("moves of a schedule")
	for i := 0; i < m && r.err == nil; i++ {
		head := r.byte()
		t := explore.Transition{Kind: explore.Kind(head >> 5), Worker: int(head & 31)}
		if t.Worker == 31 {
			t.Worker = r.smallInt("worker")
		}
		switch t.Kind {
		case explore.Act:
			name := r.name(actionNames, "action")
			a, ok := engine.ParseAction(name)
			if !ok && r.err == nil {
				r.fail("it names the action %q, which this leaselab does not know", name)
			}
			t.Action = a
		case explore.Clock:
			t.At = engine.Epoch.Add(time.Duration(r.int()) * time.Millisecond)
		}
		f.Schedule = append(f.Schedule, t)
	}
	return f
}

func (r *reader) moves() []engine.Command {
	n := r.count("moves")
	var out []engine.Command
	for i := 0; i < n && r.err == nil; i++ {
		head := r.byte()
		op, arg := int(head>>4), int(head&15)
		if arg == escape {
			arg = r.smallInt("a move's number")
		}
		switch op {
		case opNext, opFinish:
			k := arg + 1
			if head&15 == escape {
				k = arg
			}
			if k > maxItems || len(out)+k > 4*maxItems {
				r.fail("it declares %d steps, more than a code may", k)
				break
			}
			var c engine.Command = engine.CmdNext{}
			if op == opFinish {
				c = engine.CmdFinish{}
			}
			for range k {
				out = append(out, c)
			}
		case opStepWorker:
			out = append(out, engine.CmdStepWorker{Worker: arg})
		case opCrash:
			out = append(out, engine.CmdCrash{Worker: arg})
		case opRestart:
			out = append(out, engine.CmdRestart{Worker: arg})
		case opPause:
			out = append(out, engine.CmdPause{Worker: arg})
		case opToggle:
			out = append(out, engine.CmdToggle{Name: r.name(toggleNames, "toggle")})
		case opClock:
			d := time.Duration(r.int()) * time.Millisecond
			if d <= 0 && r.err == nil {
				r.fail("it moves the clock by %s: the clock only goes forward", d)
			}
			out = append(out, engine.CmdClock{Delta: d})
		case opPastLease:
			out = append(out, engine.CmdPastLease{})
		case opRedrive:
			out = append(out, engine.CmdRedrive{Key: r.str()})
		default:
			r.fail("it holds a move of kind %d, which this leaselab does not know", op)
		}
	}
	return out
}
