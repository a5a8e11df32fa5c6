// Package scenario is leaselab's scenario language: Parse reads a scenario file (a lesson, a
// test's script) into an engine.Scenario, refusing, at its line, anything a session could not
// run in bounded time and memory. It imports engine; engine does not import it.
package scenario

import (
	"fmt"
	"leaselab/engine"
	"leaselab/engine/words"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ParseError is a problem in a scenario file, at a line.
type ParseError struct {
	File string
	Line int // 0 when the problem is the whole file
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Parse reads a scenario file. The format is line based, for people:
//
//	# a comment; blank lines are ignored
//	name: after                 # header lines are "key: value"
//	title: Outbox leasing
//	explain: one line of explanation (repeat the key for more lines)
//	messages: 6
//	workers: A B                # or a number: "workers: 2"
//	worker: A2 id=Worker-A      # a worker writing another's LockedBy (a second thread of A)
//	lease: 500ms
//	leasing: on                 # also atomic-claim, ownership-check, fencing, heartbeat, skip-locked
//	lock-timeout: 300ms         # a claim's wait for a row lock with skip-locked off
//	backend: postgres           # a lesson only PostgreSQL can run (requires: row-locks)
//	requires: row-locks         # capabilities the database must have (engine.CapabilityNames)
//	heartbeat-every: 200ms
//	provider-latency: 0ms
//	slow: A 800ms               # this worker's provider calls take longer
//	fail: PAY-003 PAY-006       # keys the provider fails (default: every third)
//	seed: 42
//	teaches: fencing
//	verdict-pass: …
//	verdict-fail: …
//	verdict-checks: written-once no-violations   # the checks that decide the verdict (default: all)
//
//	steps:
//	  phase A heading
//	  A claim PAY-001           # also: step [N], run, load, select, take, lock, check, renew, finalize
//	  A crash                   # also: restart, pause, resume
//	  clock +600ms              # or: clock 09:00:00.600Z, clock past-lease
//	  set leasing off           # or a duration: set lease 300ms
//	  run [random] [until-done] [crash-rate=0.01] [crash-at=claim] [pause-rate=0.01] [A B …]
//	  concurrent [A B …]
//	  note Any sentence.
//
//	expect:                     # applies always
//	  processing_attempts = 6
//	expect when fencing=off:    # applies only with that setting
//	  ownership_violations = 1
func Parse(file string, data []byte) (*engine.Scenario, error) {
	p := &parser{file: file, seen: map[string]int{}}
	if len(data) > MaxScenarioSize {
		return nil, p.errf(0, "file too large: %d bytes (at most %d)", len(data), MaxScenarioSize)
	}
	if !utf8.Valid(data) {
		return nil, p.errf(0, "not UTF-8 text")
	}
	// Read the file as a person's editor shows it: a UTF-8 byte-order mark is not text, and a
	// line ends at CRLF, LF or a lone CR (old Mac files).
	text := strings.TrimPrefix(string(data), "\uFEFF")
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	sc := &engine.Scenario{Source: file, Messages: 6, Settings: engine.DefaultSettings(), Pass: engine.DefaultPass, Failure: engine.DefaultFailure}
	p.sc = sc
	if err := p.lines(strings.Split(text, "\n")); err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return sc, nil
}

// lines reads the file's lines, each by the section it is in: the header, steps: or an
// expect block.
func (p *parser) lines(lines []string) error {
	sc := p.sc
	section := "header"
	var block *engine.ExpectBlock
	content := false
	for i, raw := range lines {
		n := i + 1
		if r, bad := words.FirstUnsafe(raw); bad {
			return p.errf(n, "control character %s in %q: scenario files are plain text, and a terminal would act on it", words.DescribeRune(r), lineLabel(raw))
		}
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		content = true
		switch {
		case line == "steps:":
			if p.seen["steps:"] != 0 {
				return p.errf(n, "duplicate steps: section (first at line %d)", p.seen["steps:"])
			}
			p.seen["steps:"] = n
			section = "steps"
			continue
		case strings.HasPrefix(line, "expect") && strings.HasSuffix(line, ":") && !strings.Contains(line, "_"):
			b, err := p.expectHeader(n, strings.TrimSuffix(line, ":"))
			if err != nil {
				return err
			}
			sc.Expect = append(sc.Expect, b)
			block = &sc.Expect[len(sc.Expect)-1]
			section = "expect"
			continue
		}
		if err := p.line(n, section, line, block); err != nil {
			return err
		}
	}
	if !content {
		return p.errf(0, "empty scenario file")
	}
	return nil
}

// line reads one line of content in section.
func (p *parser) line(n int, section, line string, block *engine.ExpectBlock) error {
	switch section {
	case "header":
		return p.header(n, line)
	case "steps":
		if f := strings.Fields(line); f[0] == "ask:" || f[0] == "because:" {
			return p.step(n, line) // free text: a " #" is a comment only after the right answer
		}
		return p.step(n, stripComment(line))
	}
	e, err := p.expectation(n, stripComment(line))
	block.Items = append(block.Items, e)
	return err
}

// finish checks the scenario as a whole once every line is read, and fills in its defaults.
func (p *parser) finish() error {
	sc := p.sc
	if err := p.askDone(); err != nil {
		return err
	}
	if sc.Name == "" {
		return p.errf(1, "missing \"name:\"")
	}
	if len(sc.Workers) == 0 {
		sc.SetWorkers(2)
	}
	if sc.Title == "" {
		sc.Title = sc.Name
	}
	if err := p.checkHeartbeat(); err != nil {
		return err
	}
	if err := p.incidentDone(); err != nil {
		return err
	}
	if err := sc.CheckSize(); err != nil {
		return p.errf(max(p.seen["messages"], p.seen["workers"], p.seen["worker"]), "%v", err)
	}
	for _, st := range p.pendingWorkerRefs {
		if !p.hasWorker(st.name) {
			return p.errf(st.line, "unknown worker %q (declared: %s)", st.name, strings.Join(sc.WorkerShort(), " "))
		}
	}
	return nil
}

type parser struct {
	file              string
	sc                *engine.Scenario
	seen              map[string]int // header key -> line
	pendingWorkerRefs []workerRef
	actions           int // worker actions the script's steps ask for, in all
	// lastIf is the "if" line a "because:" right after it belongs to; nil after any other line.
	lastIf *engine.IfAnswer
}

func (p *parser) errf(line int, format string, args ...any) error {
	return &ParseError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// maxWorkerID bounds a worker's LockedBy value.
const maxWorkerID = 64

var workerNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,15}$`)

func (p *parser) header(n int, line string) error {
	key, val, ok := strings.Cut(line, ":")
	if !ok {
		return p.errf(n, "expected \"key: value\" or a section (steps:, expect:), got %q", line)
	}
	key = strings.TrimSpace(strings.ToLower(key))
	val = strings.TrimSpace(val)
	if handled, err := p.incidentHeader(n, key, val); handled {
		return err // free text, its own repeats (parse_incident.go)
	}
	repeatable := key == "explain" || key == "worker" || key == "slow" || key == "skew" || retryRepeatable(key)
	if first := p.seen[key]; first != 0 && !repeatable {
		return p.errf(n, "duplicate key %q (first at line %d)", key, first)
	}
	p.seen[key] = n
	switch key {
	case "title", "explain", "verdict-pass", "verdict-fail":
		// free text: a '#' is kept
	default:
		val = stripComment(val)
	}
	sc := p.sc
	if _, ok := engine.LookupToggle(key); ok {
		on, err := engine.ParseOnOff(val)
		if err != nil {
			return p.errf(n, "bad %s: %v", key, err)
		}
		return sc.Settings.Set(key, on)
	}
	if handled, err := p.retryHeader(n, key, val); handled {
		return err
	}
	if handled, err := p.extraHeader(n, key, val); handled {
		return err
	}
	if handled, err := p.lessonHeader(n, key, val); handled {
		return err
	}
	switch key {
	case "name":
		if !regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`).MatchString(val) {
			return p.errf(n, "bad name %q: use lower-case letters, digits and '-'", val)
		}
		sc.Name = val
	case "title":
		sc.Title = val
	case "explain":
		sc.Explain = append(sc.Explain, val)
	case "verdict-pass":
		sc.Pass = val
	case "verdict-fail":
		sc.Failure = val
	case "messages":
		v, err := strconv.Atoi(val)
		if err != nil || v < 1 || v > engine.MaxScenarioMessages {
			return p.errf(n, "bad messages %q: want a whole number from 1 to %d", val, engine.MaxScenarioMessages)
		}
		sc.Messages = v
	case "workers":
		return p.workers(n, val)
	case "worker":
		return p.worker(n, val)
	case "lease", "heartbeat-every", "provider-latency", "lock-timeout":
		return p.durationKey(n, key, val)
	case "slow":
		return p.slow(n, val)
	case "fail":
		sc.Fail = strings.Fields(val)
	case "seed":
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return p.errf(n, "bad seed %q: want a whole number", val)
		}
		sc.Seed = v
	default:
		return p.errf(n, "unknown key %q (known: name, title, explain, messages, workers, worker, slow, lease, heartbeat-every, provider-latency, lock-timeout, %s, rescuer, skew, fail, seed, backend, requires, teaches, verdict-pass, verdict-fail, verdict-checks)", key, strings.Join(append(engine.AllToggleNames(), engine.ToggleNamesIn(engine.InRescue)...), ", "))
	}
	return nil
}

// durationKey reads one of the settings' durations: lease, heartbeat-every, provider-latency
// and lock-timeout.
func (p *parser) durationKey(n int, key, val string) error {
	d, err := p.duration(n, key, val)
	if err != nil {
		return err
	}
	st := &p.sc.Settings
	switch key {
	case "lease":
		st.Lease = d
	case "heartbeat-every":
		st.HeartbeatEvery = d
	case "lock-timeout":
		if d < time.Millisecond {
			return p.errf(n, "bad duration for lock-timeout: want at least 1ms (a claim must be able to give up)")
		}
		st.LockTimeout = d
	default:
		st.ProviderLatency = d
	}
	return nil
}

// lessonHeader reads the keys of what the lesson is about and needs: verdict-checks, backend,
// requires and teaches. handled is false for any other key.
func (p *parser) lessonHeader(n int, key, val string) (handled bool, err error) {
	sc := p.sc
	switch key {
	case "verdict-checks":
		known := map[string]bool{}
		for _, id := range engine.CheckIDs() {
			known[id] = true
		}
		for _, id := range strings.Fields(val) {
			if !known[id] {
				return true, p.errf(n, "verdict-checks: unknown check %q (known: %s)", id, strings.Join(engine.CheckIDs(), ", "))
			}
			sc.VerdictChecks = append(sc.VerdictChecks, id)
		}
		if len(sc.VerdictChecks) == 0 {
			return true, p.errf(n, "verdict-checks: name at least one check (known: %s)", strings.Join(engine.CheckIDs(), ", "))
		}
	case "backend":
		if val != engine.BackendPostgres {
			return true, p.errf(n, "bad backend %q: the only backend a scenario may require is %s", val, engine.BackendPostgres)
		}
		sc.Backend = val
		sc.Requires = appendNew(sc.Requires, engine.CapRowLocks)
	case "requires":
		for _, name := range strings.Fields(val) {
			if err := engine.CheckCapability(name); err != nil {
				return true, p.errf(n, "requires: %v", err)
			}
			sc.Requires = appendNew(sc.Requires, name)
		}
	case "teaches":
		if _, err := sc.Settings.Get(val); err != nil {
			return true, p.errf(n, "bad teaches: %v", err)
		}
		sc.Teaches = val
	default:
		return false, nil
	}
	return true, nil
}

func (p *parser) duration(n int, key, val string) (time.Duration, error) {
	d, err := time.ParseDuration(val)
	if err != nil {
		return 0, p.errf(n, "bad duration for %s: %q (write it like 500ms or 1.5s)", key, val)
	}
	if key == "lease" {
		if err := engine.CheckLease(d); err != nil {
			return 0, p.errf(n, "bad duration for lease: %v", err)
		}
		return d, nil
	}
	if d < 0 || d > 24*time.Hour {
		return 0, p.errf(n, "bad duration for %s: %s is out of range (0 to 24h)", key, val)
	}
	if d%time.Millisecond != 0 {
		return 0, p.errf(n, "bad duration for %s: %s is finer than a millisecond", key, val)
	}
	return d, nil
}

func (p *parser) workers(n int, val string) error {
	if len(p.sc.Workers) > 0 {
		return p.errf(n, "\"workers:\" must come before any \"worker:\" line")
	}
	if k, err := strconv.Atoi(val); err == nil {
		if k < 1 || k > engine.MaxWorkers {
			return p.errf(n, "bad workers %d: want 1 to %d", k, engine.MaxWorkers)
		}
		p.sc.SetWorkers(k)
		return nil
	}
	for _, name := range strings.Fields(val) {
		if err := p.addWorker(n, name, ""); err != nil {
			return err
		}
	}
	if len(p.sc.Workers) == 0 {
		return p.errf(n, "workers: name at least one worker")
	}
	return nil
}

func (p *parser) worker(n int, val string) error {
	f := strings.Fields(val)
	if len(f) == 0 || len(f) > 2 {
		return p.errf(n, "worker: want \"NAME\" or \"NAME id=LOCKEDBY\", got %q", val)
	}
	id := ""
	if len(f) == 2 {
		v, ok := strings.CutPrefix(f[1], "id=")
		if !ok || v == "" {
			return p.errf(n, "worker: want \"NAME id=LOCKEDBY\", got %q", val)
		}
		if len(v) > maxWorkerID {
			return p.errf(n, "worker: id %q is longer than %d bytes", v, maxWorkerID)
		}
		id = v
	}
	return p.addWorker(n, f[0], id)
}

func (p *parser) slow(n int, val string) error {
	f := strings.Fields(val)
	if len(f) != 2 {
		return p.errf(n, "slow: want \"WORKER DURATION\", got %q", val)
	}
	d, err := p.duration(n, "slow", f[1])
	if err != nil {
		return err
	}
	for i := range p.sc.Workers {
		if w := &p.sc.Workers[i]; w.Short == f[0] {
			if w.Slow {
				return p.errf(n, "slow: worker %s named twice", f[0])
			}
			w.Latency, w.Slow = d, true
			return nil
		}
	}
	return p.errf(n, "unknown worker %q (declared before this line: %s)", f[0], strings.Join(p.sc.WorkerShort(), " "))
}

func (p *parser) addWorker(n int, short, id string) error {
	if !workerNameRE.MatchString(short) {
		return p.errf(n, "bad worker name %q: letters and digits, starting with a letter", short)
	}
	if p.hasWorker(short) {
		return p.errf(n, "duplicate worker name %q", short)
	}
	if r := p.sc.Rescuer; r != nil && r.Short == short {
		return p.errf(n, "worker %q: that is the rescuer's name (line %d); a rescuer and a worker need names of their own", short, p.seen["rescuer"])
	}
	if len(p.sc.Workers) >= engine.MaxWorkers {
		return p.errf(n, "too many workers (at most %d)", engine.MaxWorkers)
	}
	if id == "" {
		id = engine.WorkerName(short)
	}
	p.sc.Workers = append(p.sc.Workers, engine.WorkerSpec{Short: short, ID: id})
	return nil
}

func (p *parser) hasWorker(short string) bool {
	for _, w := range p.sc.Workers {
		if w.Short == short {
			return true
		}
	}
	return false
}

func (p *parser) ref(n int, name string) {
	p.pendingWorkerRefs = append(p.pendingWorkerRefs, workerRef{line: n, name: name})
}

// appendNew appends name to names unless it is there already.
func appendNew(names []string, name string) []string {
	if slices.Contains(names, name) {
		return names
	}
	return append(names, name)
}
